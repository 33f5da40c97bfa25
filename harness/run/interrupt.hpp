#pragma once
// Ctrl-C and SIGTERM during a run: the handler only sets a flag; the orchestrator polls it
// (also while a guest runs, through the driver's `done` predicate), destroys the guest, keeps
// what was gathered and returns, and cli/ prints how to resume and exits 130.
namespace abvm {

// Installs handlers for SIGINT and SIGTERM that set the flag (idempotent).
void install_interrupt_handlers();

// True once SIGINT or SIGTERM arrived since install.
bool interrupt_requested();

// Which signal (0 if none).
int interrupt_signal();

}  // namespace abvm
