#include "gx_worker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda.h>

#include "gx_driver.h"
#include "gx_module.h"

static gx_worker_page private_page; /* used when no supervisor shares one */
static gx_worker_page *page = &private_page;
static int channel_fd = -1;
static int worker_slot;
static const void *last_kernel; /* the kernel whose name the page holds */

int gx_worker_attach(int *device, int *slot, gx_error *error)
{
    const char *value = getenv("GPUEXP_WORKER");
    if (!value || !*value)
        return 0;
    int channel, page_fd;
    if (sscanf(value, "%d,%d,%d,%d", &channel, &page_fd, device, slot) != 4 || channel < 0 || page_fd < 0)
        return -gx_fail(error, GX_ERR_USAGE, "GPUEXP_WORKER='%s' is not channel,page,device,slot", value);
    void *shared = mmap(NULL, sizeof(gx_worker_page), PROT_READ | PROT_WRITE, MAP_SHARED, page_fd, 0);
    if (shared == MAP_FAILED)
        return -gx_fail(error, GX_ERR_SYSTEM, "mmap of the worker page failed");
    page = shared;
    /* the worker's own children (a build, a shell of the script's) must not hold the channel: the
       supervisor sees the worker end when its end of the channel closes */
    close(page_fd);
    if (fcntl(channel, F_SETFD, FD_CLOEXEC) != 0)
        return -gx_fail(error, GX_ERR_SYSTEM, "fcntl(FD_CLOEXEC) on the worker channel failed: %s", strerror(errno));
    channel_fd = channel;
    worker_slot = *slot;
    unsetenv("GPUEXP_WORKER");
    return 1;
}

int gx_worker_channel(void)
{
    return channel_fd;
}
int gx_worker_slot(void)
{
    return worker_slot;
}
const gx_worker_page *gx_worker_own_page(void)
{
    return page;
}

/* Every kernel launch's hook: cheap (the name is copied only when the kernel changes). */
static void note_launch(const struct gx_kernel *kernel, const struct gx_launch_config *config)
{
    if (kernel != last_kernel) {
        snprintf(page->kernel, sizeof page->kernel, "%.159s", kernel->name);
        last_kernel = kernel;
    }
    memcpy(page->grid, config->grid, sizeof page->grid);
    memcpy(page->block, config->block, sizeof page->block);
    page->shared_bytes = config->shared_bytes;
    page->launches++;
}

void gx_worker_describe_launch(const gx_worker_page *p, char *out, size_t size)
{
    if (!p->launches) {
        snprintf(out, size, "no kernel launched yet");
        return;
    }
    snprintf(out, size, "last launch: kernel '%.160s', grid %ux%ux%u, block %ux%ux%u, %u bytes dynamic shared memory",
             p->kernel, p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2], p->shared_bytes);
}

/* Records the first sticky error (called from the driver's error path); readable after. */
static void context_lost(const char *message)
{
    if (!page->context_error[0])
        snprintf(page->context_error, sizeof page->context_error, "%s", message);
}

void gx_worker_install_hooks(void)
{
    gx_module_on_launch(note_launch);
    gx_driver_on_context_lost(context_lost);
}

const char *gx_worker_context_error(void)
{
    return page->context_error[0] ? page->context_error : NULL;
}
