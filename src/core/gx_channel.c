#include "gx_channel.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define GX_CHANNEL_MAX (1ull << 31)

int gx_channel_send(int fd, const char *data, size_t size, gx_error *error)
{
    if (size > GX_CHANNEL_MAX)
        return gx_fail(error, GX_ERR_SYSTEM, "a %zu-byte message is more than the channel carries", size);
    uint64_t length = size;
    struct iovec parts[2] = {{&length, sizeof length}, {(void *)data, size}};
    struct msghdr message = {.msg_iov = parts, .msg_iovlen = 2};
    size_t left = sizeof length + size;
    /* header and payload in one call: one wake-up of the reader per message */
    while (left > 0) {
        /* MSG_NOSIGNAL: a vanished peer is an error here, never a SIGPIPE */
        ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return gx_fail(error, GX_ERR_SYSTEM, "send to the other gpuexp process failed: %s", strerror(errno));
        left -= (size_t)n;
        while (n > 0 && message.msg_iovlen > 0) { /* a partial send: skip what went */
            size_t part = (size_t)n < message.msg_iov->iov_len ? (size_t)n : message.msg_iov->iov_len;
            message.msg_iov->iov_base = (char *)message.msg_iov->iov_base + part;
            message.msg_iov->iov_len -= part;
            n -= (ssize_t)part;
            if (message.msg_iov->iov_len == 0) {
                message.msg_iov++;
                message.msg_iovlen--;
            }
        }
    }
    return GX_OK;
}

/* Reads exactly size bytes: 1, 0 at the end of the stream before any byte, -1 on an error or an
   end inside the bytes. */
static int read_exactly(int fd, void *buffer, size_t size)
{
    for (size_t done = 0; done < size;) {
        ssize_t n = read(fd, (char *)buffer + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return done == 0 ? 0 : -1;
        done += (size_t)n;
    }
    return 1;
}

int gx_channel_receive(int fd, char **data, size_t *size, int *closed, gx_error *error)
{
    *data = NULL;
    *size = 0;
    *closed = 0;
    uint64_t length;
    errno = 0;
    int status = read_exactly(fd, &length, sizeof length);
    if (status == 0) {
        *closed = 1;
        return gx_fail(error, GX_ERR_SYSTEM, "the other gpuexp process closed the channel");
    }
    if (status < 0)
        return gx_fail(error, GX_ERR_SYSTEM, "read from the channel failed: %s", errno ? strerror(errno) : "cut frame");
    if (length > GX_CHANNEL_MAX)
        return gx_fail(error, GX_ERR_SYSTEM, "malformed frame length %llu on the channel", (unsigned long long)length);
    char *buffer = malloc((size_t)length + 1);
    if (!buffer)
        return gx_fail(error, GX_ERR_SYSTEM, "out of memory for a %llu-byte message", (unsigned long long)length);
    errno = 0;
    status = read_exactly(fd, buffer, (size_t)length);
    if (status <= 0 && length > 0) {
        free(buffer);
        *closed = errno == 0;
        return gx_fail(error, GX_ERR_SYSTEM, "the channel ended inside a message");
    }
    buffer[length] = 0;
    *data = buffer;
    *size = (size_t)length;
    return GX_OK;
}
