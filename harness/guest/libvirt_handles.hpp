#pragma once
// Owning handles for libvirt objects and libvirt's last error, shared by the libvirt driver and
// what it stands on (the console stream, the storage staging). Each handle frees its object
// however its owner is left, so no code path leaks a connection, domain, volume or stream.
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <memory>
#include <string>

namespace abvm {

// libvirt's message for the last failed call on this thread.
inline std::string libvirt_error() {
  const char* m = virGetLastErrorMessage();
  return m ? m : "unknown libvirt error";
}

// libvirt's code for the last failed call on this thread (VIR_ERR_OK when none).
inline int libvirt_error_code() {
  virErrorPtr e = virGetLastError();
  return e ? e->code : VIR_ERR_OK;
}

struct LibvirtConnCloser {
  void operator()(virConnectPtr c) const { virConnectClose(c); }
};
using ConnHandle = std::unique_ptr<virConnect, LibvirtConnCloser>;

struct LibvirtPoolFree {
  void operator()(virStoragePoolPtr p) const { virStoragePoolFree(p); }
};
using PoolHandle = std::unique_ptr<virStoragePool, LibvirtPoolFree>;

struct LibvirtVolFree {
  void operator()(virStorageVolPtr v) const { virStorageVolFree(v); }
};
using VolHandle = std::unique_ptr<virStorageVol, LibvirtVolFree>;

// Owns a running domain: destroys it (if still there) and frees the handle, whatever happens.
class DomainHandle {
 public:
  explicit DomainHandle(virDomainPtr d) : d_(d) {}
  ~DomainHandle() {
    if (!d_) return;
    if (virDomainIsActive(d_) == 1) virDomainDestroy(d_);
    virDomainFree(d_);
  }
  DomainHandle(const DomainHandle&) = delete;
  DomainHandle& operator=(const DomainHandle&) = delete;
  virDomainPtr get() const { return d_; }

 private:
  virDomainPtr d_;
};

// A stream that is still open when its handle goes is aborted first (an unfinished upload must
// not look finished; a console must let go of the guest's chardev).
class StreamHandle {
 public:
  StreamHandle() = default;
  explicit StreamHandle(virStreamPtr s) : s_(s) {}
  ~StreamHandle() { reset(); }
  StreamHandle(const StreamHandle&) = delete;
  StreamHandle& operator=(const StreamHandle&) = delete;
  StreamHandle(StreamHandle&& o) noexcept : s_(o.s_), finished_(o.finished_) { o.s_ = nullptr; }
  StreamHandle& operator=(StreamHandle&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = o.s_;
      finished_ = o.finished_;
      o.s_ = nullptr;
    }
    return *this;
  }
  virStreamPtr get() const { return s_; }
  explicit operator bool() const { return s_ != nullptr; }
  // Marks the stream finished (virStreamFinish succeeded): it is then only freed.
  void finished() { finished_ = true; }
  void reset() {
    if (!s_) return;
    if (!finished_) virStreamAbort(s_);
    virStreamFree(s_);
    s_ = nullptr;
    finished_ = false;
  }

 private:
  virStreamPtr s_ = nullptr;
  bool finished_ = false;
};

}  // namespace abvm
