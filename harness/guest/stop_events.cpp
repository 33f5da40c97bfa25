#include "guest/stop_events.hpp"

#include <thread>

namespace abvm {
namespace {

using Clock = std::chrono::steady_clock;

int on_lifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* opaque) {
  auto* watch = static_cast<std::shared_ptr<StopWatch>*>(opaque);
  if (event == VIR_DOMAIN_EVENT_STOPPED) (*watch)->detail = detail;
  return 0;
}

}  // namespace

StopEvents::StopEvents(virConnectPtr conn, virDomainPtr dom) : conn_(conn), watch_(std::make_shared<StopWatch>()) {
  auto* opaque = new std::shared_ptr<StopWatch>(watch_);
  id_ = virConnectDomainEventRegisterAny(conn_, dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                         VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), opaque,
                                         [](void* p) { delete static_cast<std::shared_ptr<StopWatch>*>(p); });
  if (id_ < 0) delete opaque;  // without events the console alone decides, as before
}

StopEvents::~StopEvents() {
  if (id_ >= 0) virConnectDomainEventDeregisterAny(conn_, id_);
}

int StopEvents::stop_detail(std::chrono::milliseconds grace) const {
  const auto end = Clock::now() + grace;
  while (id_ >= 0 && watch_->detail < 0 && Clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return watch_->detail;
}

}  // namespace abvm
