/* Launch attributes (thread block clusters, cooperative launch, programmatic dependent launch),
   checked before the driver sees them, on a GPU with the driver's facts and in an offline plan
   with the architecture's. Pure: no driver calls here. */
#ifndef GX_LAUNCH_ATTRIBUTES_H
#define GX_LAUNCH_ATTRIBUTES_H

#include "gx_error.h"
#include "gx_module.h"

/* What the checks need to know of where the kernel runs. */
typedef struct gx_launch_target {
    const char *where; /* "NVIDIA H100 80GB HBM3", or "sm_90 (offline plan)" */
    int cc_major, cc_minor;
    int cluster_launch;     /* the device can launch clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) */
    int cooperative_launch; /* CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH */
    int sm_count;
    int sm_count_is_model;   /* an offline plan: the largest GPU of the architecture */
    int blocks_per_sm;       /* co-resident blocks of this kernel and configuration per SM; -1 unknown */
    int max_active_clusters; /* clusters resident at once on the GPU (cuOccupancyMaxActiveClusters); -1 unknown */
    int required_cluster[3]; /* the kernel's __cluster_dims__; 0: none */
} gx_launch_target;

/* The most blocks a cluster may have on compute capability major.minor: 8 (the portable size) or,
   with non_portable, what the architecture allows (16 on 9.0 and 10.0); 0 without clusters. */
int gx_cluster_max_blocks(int cc_major, int cc_minor, int non_portable);

/* The SM count of the largest GPU of an architecture ("sm_90": 132, H100 SXM and H200), for an
   offline plan's co-residency model; 0 when unknown. */
int gx_arch_largest_sm_count(const char *arch);

/* The cluster the launch runs with: config's, else the kernel's own; 0 (and cluster zeros) when none. */
int gx_launch_cluster(const gx_launch_config *config, const gx_launch_target *target, unsigned cluster[3]);

/* Checks config's attributes: a cluster only on 9.0+ devices that launch them, the same as the
   kernel's __cluster_dims__ when it has them, dividing the grid, within the size limit and resident
   at all; a cooperative grid no larger than what can be resident at once; a programmatic launch
   on 9.0+. GX_ERR_USAGE naming the kernel, the values and the limit otherwise. */
int gx_launch_check_attributes(const char *kernel, const gx_launch_config *config, const gx_launch_target *target,
                               gx_error *error);

#endif
