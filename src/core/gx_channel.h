/* Framed messages over a stream socket between the supervisor and a worker: a 64-bit length in
   the machine's byte order (both ends are this binary on one host), then the payload, sent in one
   call. Both ends use blocking reads of whole frames. */
#ifndef GX_CHANNEL_H
#define GX_CHANNEL_H

#include <stddef.h>

#include "gx_error.h"

int gx_channel_send(int fd, const char *data, size_t size, gx_error *error);
/* Reads one whole frame into *data (malloc'ed, NUL-terminated). At the end of the stream (the
   other side is gone) returns GX_ERR_SYSTEM with *data NULL and *closed set. */
int gx_channel_receive(int fd, char **data, size_t *size, int *closed, gx_error *error);

#endif
