#include "gx_channel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int write_all(int fd, const char *data, size_t size, gx_error *error)
{
    while (size > 0) {
        /* MSG_NOSIGNAL: a vanished peer is an error here, never a SIGPIPE */
        ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return gx_fail(error, GX_ERR_SYSTEM, "send to the %s failed: %s", "other gpuexp process", strerror(errno));
        data += n;
        size -= (size_t)n;
    }
    return GX_OK;
}

int gx_channel_send(int fd, const char *data, size_t size, gx_error *error)
{
    char header[32];
    int length = snprintf(header, sizeof header, "%zu\n", size);
    if (write_all(fd, header, (size_t)length, error))
        return error->kind;
    return write_all(fd, data, size, error);
}

/* 1 byte read, 0 at the end of the stream, -1 on error */
static int read_some(int fd, char *buffer, size_t size, size_t *got)
{
    for (;;) {
        ssize_t n = read(fd, buffer, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        *got = (size_t)n;
        return n > 0;
    }
}

int gx_channel_receive(int fd, char **data, size_t *size, int *closed, gx_error *error)
{
    *data = NULL;
    *size = 0;
    *closed = 0;
    char header[32];
    size_t used = 0, got;
    /* the header, a byte at a time: frames are few and large, so this costs nothing */
    for (;;) {
        int status = read_some(fd, header + used, 1, &got);
        if (status == 0) {
            *closed = 1;
            return gx_fail(error, GX_ERR_SYSTEM, "the other gpuexp process closed the channel");
        }
        if (status < 0)
            return gx_fail(error, GX_ERR_SYSTEM, "read from the channel failed: %s", strerror(errno));
        if (header[used] == '\n')
            break;
        if (++used >= sizeof header - 1)
            return gx_fail(error, GX_ERR_SYSTEM, "malformed frame header on the channel");
    }
    header[used] = 0;
    char *end;
    unsigned long long length = strtoull(header, &end, 10);
    if (*end || length > (1ull << 31))
        return gx_fail(error, GX_ERR_SYSTEM, "malformed frame length '%s' on the channel", header);
    char *buffer = malloc((size_t)length + 1);
    if (!buffer)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory for a %llu-byte message", length);
    for (size_t done = 0; done < length; done += got) {
        int status = read_some(fd, buffer + done, (size_t)length - done, &got);
        if (status <= 0) {
            free(buffer);
            *closed = status == 0;
            return gx_fail(error, GX_ERR_SYSTEM, "the channel ended inside a message");
        }
    }
    buffer[length] = 0;
    *data = buffer;
    *size = (size_t)length;
    return GX_OK;
}
