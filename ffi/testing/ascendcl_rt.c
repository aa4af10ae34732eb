/*
 * ascendcl_rt.c: the test device runtime's process and device calls. There
 * is no device to drive, so they only keep the per-thread current device
 * and validate their arguments (streams: ascendcl_stream.c).
 */
#include "acl/acl.h"
#include "ascendcl_internal.h"

/* Per thread, as on the real runtime, where the device is bound to the
 * thread's context. */
static __thread int32_t t_device;

int32_t swt_current_device(void) { return t_device; }

static int valid_device(int32_t id) { return id >= 0 && id < SWT_MAX_DEVICES; }

aclError aclInit(const char *configPath) {
  (void)configPath;
  return ACL_SUCCESS;
}

aclError aclFinalize(void) { return ACL_SUCCESS; }

aclError aclrtSetDevice(int32_t deviceId) {
  if (!valid_device(deviceId)) return ACL_ERROR_INVALID_PARAM;
  t_device = deviceId;
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId) {
  if (deviceId == NULL) return ACL_ERROR_INVALID_PARAM;
  *deviceId = t_device;
  return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId) { return valid_device(deviceId) ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM; }
