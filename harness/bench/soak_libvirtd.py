#!/usr/bin/python3
"""A test libvirtd for the soak (harness/bench/soak.sh), as harness/tests/libvirt_daemons.hpp makes
them for the tests: a libvirtd of its own in a mount namespace of its own (held by `sleep
infinity`), listening on 127.0.0.1:PORT (TCP, no auth) and on its UNIX socket DIR/run/libvirt-sock,
with private /run, /etc/libvirt, /var/lib (libvirt and abvm's pool), /var/cache/libvirt (CACHE),
/var/log and empty tmpfs over /tmp, /var/tmp, /work and /root/.cache. Never this machine's libvirtd.

    soak_libvirtd.py DIR CACHE PORT

Runs in the foreground until SIGTERM. It is the subreaper of the daemon's QEMUs (they daemonize)
and reaps them at once. The daemon's pid is in DIR/daemon.pid once it answers; SIGUSR1 restarts it
(SIGKILLs a daemon still there, stopped or not, and starts a new one); SIGTERM kills every process
of the namespace (daemon, QEMUs) and the holder, and exits.
"""
import ctypes
import os
import signal
import socket
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
QEMU_CONF = """user = "root"
group = "root"
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
remember_owner = 0
"""


def mount_ns(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return ""


def in_namespace(ns):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and ns and mount_ns(name) == ns:
            out.append(int(name))
    return out


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def main():
    d, cache, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for sub in ("etc", "run", "lib", "log", "abvm"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(d, "etc", "libvirtd.conf"), "w") as f:
        f.write('unix_sock_dir = "/run/libvirt"\nauth_unix_ro = "none"\nauth_unix_rw = "none"\n'
                f'listen_addr = "127.0.0.1"\nlisten_tcp = 1\ntcp_port = "{port}"\nauth_tcp = "none"\nlisten_tls = 0\n')
    with open(os.path.join(d, "etc", "qemu.conf"), "w") as f:
        f.write(QEMU_CONF)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    hide = " ".join(h for h in ("/tmp", "/var/tmp", "/work", "/root/.cache") if os.path.isdir(h))
    script = f"""set -e
mount -t tmpfs -o mode=0755 tmpfs /run; mkdir -m 1777 /run/lock; mkdir /run/libvirt
mount --bind {d}/run /run/libvirt
mount --bind {d}/etc /etc/libvirt
mount -t tmpfs -o mode=0755 tmpfs /var/lib; mkdir /var/lib/libvirt /var/lib/abvm
mount --bind {d}/lib /var/lib/libvirt; mount --bind {d}/abvm /var/lib/abvm
mount -t tmpfs -o mode=0755 tmpfs /var/cache; mkdir /var/cache/libvirt; mount --bind {cache} /var/cache/libvirt
mount -t tmpfs -o mode=0755 tmpfs /var/log; mkdir /var/log/libvirt; mount --bind {d}/log /var/log/libvirt
for h in {hide}; do mount -t tmpfs -o mode=0755 tmpfs $h; done
exec sleep infinity
"""
    log = open(os.path.join(d, "daemon.log"), "ab")
    holder = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                              stdout=log, stderr=log, env=ENV)
    own = mount_ns(os.getpid())
    for _ in range(500):
        try:
            cmd = open(f"/proc/{holder.pid}/cmdline", "rb").read()
        except OSError:
            cmd = b""
        if cmd.startswith(b"sleep") and mount_ns(holder.pid) != own:
            break
        if holder.poll() is not None:
            sys.exit(f"soak_libvirtd: the namespace could not be made (see {d}/daemon.log)")
        time.sleep(0.01)
    ns = mount_ns(holder.pid)
    state = {"daemon": None, "restart": True, "stop": False}
    signal.signal(signal.SIGUSR1, lambda *_: state.update(restart=True))
    signal.signal(signal.SIGTERM, lambda *_: state.update(stop=True))
    signal.signal(signal.SIGINT, lambda *_: state.update(stop=True))
    pidfile = os.path.join(d, "daemon.pid")

    def start():
        old = state["daemon"]
        if old is not None and old.poll() is None:
            old.kill()
            old.wait()
        try:
            os.unlink(pidfile)
        except FileNotFoundError:
            pass
        p = subprocess.Popen(["nsenter", "-t", str(holder.pid), "-m", "--", "/usr/sbin/libvirtd", "--listen",
                              "--pid-file", "/run/libvirt/libvirtd.pid"], stdout=log, stderr=log, env=ENV, cwd="/")
        state["daemon"] = p
        end = time.time() + 60
        while time.time() < end and p.poll() is None:
            if os.path.exists(os.path.join(d, "run", "libvirt-sock")) and answers(port):
                with open(pidfile + ".tmp", "w") as f:
                    f.write(f"{p.pid}\n")
                os.rename(pidfile + ".tmp", pidfile)
                return
            time.sleep(0.05)
        print(f"soak_libvirtd: libvirtd did not answer on port {port} (see {d}/daemon.log)", file=sys.stderr)

    while not state["stop"]:
        if state["restart"]:
            state["restart"] = False
            start()
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)  # the QEMUs that exit, and a killed daemon
                if pid == 0:
                    break
        except ChildProcessError:
            pass
        time.sleep(0.02)
    for _ in range(50):
        pids = [p for p in in_namespace(ns) if p != holder.pid]
        if not pids:
            break
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
    holder.kill()
    holder.wait()


if __name__ == "__main__":
    main()
