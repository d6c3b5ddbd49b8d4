/* The worker side of a supervised run: the channel to the supervisor, the status page shared
   with it (last kernel launch, the CUDA error that ended the context), and the sticky-error flag.
   A supervisor reads the page after a worker died or was ended, so it can say what was running. */
#ifndef GX_WORKER_H
#define GX_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "gx_error.h"

typedef struct gx_worker_page {
    uint64_t launches; /* kernel launches so far in this worker */
    char kernel[160];  /* the last kernel launched */
    unsigned grid[3], block[3], shared_bytes;
    char context_error[1024]; /* the error that made the context unusable, "" while it is fine */
} gx_worker_page;

/* Reads GPUEXP_WORKER ("channel_fd,page_fd,device,slot"), maps the page and clears the variable so
   programs the script starts are not workers. Returns 1 when this process is a worker, 0 when not,
   and a negative gx_error kind (with *error set) when the variable is malformed. */
int gx_worker_attach(int *device, int *slot, gx_error *error);
int gx_worker_channel(void); /* -1 when not a worker */
int gx_worker_slot(void);    /* the worker's place in the run (0 is the one whose output is shown) */

/* Makes the CUDA layer report launches and lost contexts here, through its hooks (gx_module_on_launch,
   gx_driver_on_context_lost); called once at start. */
void gx_worker_install_hooks(void);
/* "kernel 'k', grid 1x1x1, block 32x1x1, 0 bytes dynamic shared memory" from a page; "" if none. */
void gx_worker_describe_launch(const gx_worker_page *page, char *out, size_t size);
const gx_worker_page *gx_worker_own_page(void); /* this process's page (a private one when not a worker) */

/* The first sticky error of this process (the driver's error path reports it); NULL while the context
   is fine. */
const char *gx_worker_context_error(void);

#endif
