/*
 * ascendcl_event.c: events of the test device runtime. aclrtRecordEvent
 * marks a stream's queue (ascendcl_stream.c) and aclrtSynchronizeEvent
 * waits for the copies queued before that mark and no others, as a device
 * does: a caller can keep copies queued behind the one it waits for, so the
 * copy engine never idles while the caller wakes up. An event never
 * recorded is complete; recording it again moves its mark.
 */
#include <stdlib.h>

#include "acl/acl.h"
#include "ascendcl_internal.h"

/* Tells our events from stray pointers, as the runtime's handle checks do. */
#define EVENT_MAGIC 0x73777465u

struct event {
  uint32_t magic;
  int recorded;
  struct swt_mark mark;
};

static struct event *event_of(aclrtEvent handle) {
  struct event *e = handle;
  return e != NULL && e->magic == EVENT_MAGIC ? e : NULL;
}

aclError aclrtCreateEvent(aclrtEvent *event) {
  if (event == NULL) return ACL_ERROR_INVALID_PARAM;
  struct event *e = calloc(1, sizeof *e);
  if (e == NULL) return ACL_ERROR_BAD_ALLOC;
  e->magic = EVENT_MAGIC;
  *event = e;
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  struct event *e = event_of(event);
  if (e == NULL) return ACL_ERROR_INVALID_PARAM;
  e->magic = 0;
  free(e);
  return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  struct event *e = event_of(event);
  if (e == NULL) return ACL_ERROR_INVALID_PARAM;
  struct swt_mark mark;
  aclError err = swt_stream_mark(stream, &mark);
  if (err != ACL_SUCCESS) return err;
  e->mark = mark;
  e->recorded = 1;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  struct event *e = event_of(event);
  if (e == NULL) return ACL_ERROR_INVALID_PARAM;
  return e->recorded ? swt_mark_wait(&e->mark) : ACL_SUCCESS;
}
