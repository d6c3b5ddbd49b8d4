#include "gx_launch_attributes.h"

#include <string.h>

int gx_cluster_max_blocks(int cc_major, int cc_minor, int non_portable)
{
    if (cc_major < 9)
        return 0;
    /* CUDA C++ Programming Guide, "Thread Block Clusters": 8 blocks portably; H100 and B200 allow
       16 once the kernel opts in (CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) */
    if (non_portable && (cc_major == 9 || cc_major == 10) && cc_minor == 0)
        return 16;
    return 8;
}

int gx_arch_largest_sm_count(const char *arch)
{
    static const struct {
        const char *arch;
        int sms;
    } largest[] = {{"sm_70", 80},  {"sm_75", 72},  {"sm_80", 108},  {"sm_86", 84},  {"sm_87", 16},
                   {"sm_89", 142}, {"sm_90", 132}, {"sm_100", 148}, {"sm_120", 188}};
    char base[16];
    size_t length = strlen(arch);
    if (length >= sizeof base)
        return 0;
    memcpy(base, arch, length + 1);
    if (length > 3 && (base[length - 1] == 'a' || base[length - 1] == 'f')) /* sm_90a */
        base[length - 1] = 0;
    for (size_t i = 0; i < sizeof largest / sizeof largest[0]; i++)
        if (strcmp(largest[i].arch, base) == 0)
            return largest[i].sms;
    return 0;
}

int gx_launch_cluster(const gx_launch_config *config, const gx_launch_target *target, unsigned cluster[3])
{
    int given = config->cluster[0] || config->cluster[1] || config->cluster[2];
    int required = target->required_cluster[0] > 0;
    for (int i = 0; i < 3; i++)
        cluster[i] = given      ? (config->cluster[i] ? config->cluster[i] : 1)
                     : required ? (unsigned)(target->required_cluster[i] > 0 ? target->required_cluster[i] : 1)
                                : 0;
    return given || required;
}

static int check_cluster(const char *kernel, const gx_launch_config *c, const gx_launch_target *t, gx_error *error)
{
    unsigned cluster[3];
    if (!gx_launch_cluster(c, t, cluster))
        return GX_OK;
    int given = c->cluster[0] || c->cluster[1] || c->cluster[2];
    if (t->cc_major < 9 || !t->cluster_launch)
        return gx_fail(error, GX_ERR_USAGE,
                       "launch of '%s' with a cluster of %ux%ux%u: thread block clusters need "
                       "compute capability 9.0 (Hopper) or newer, and %s is %d.%d",
                       kernel, cluster[0], cluster[1], cluster[2], t->where, t->cc_major, t->cc_minor);
    if (given && t->required_cluster[0] > 0)
        for (int i = 0; i < 3; i++)
            if ((int)cluster[i] != (t->required_cluster[i] > 0 ? t->required_cluster[i] : 1))
                return gx_fail(error, GX_ERR_USAGE,
                               "launch of '%s' with a cluster of %ux%ux%u: the kernel declares "
                               "__cluster_dims__(%d, %d, %d); leave 'cluster' out or give the same shape",
                               kernel, cluster[0], cluster[1], cluster[2], t->required_cluster[0],
                               t->required_cluster[1], t->required_cluster[2]);
    static const char axes[] = "xyz";
    for (int i = 0; i < 3; i++)
        if (c->grid[i] % cluster[i] != 0)
            return gx_fail(error, GX_ERR_USAGE,
                           "launch of '%s': grid %ux%ux%u is not a whole number of clusters of "
                           "%ux%ux%u%s (grid.%c = %u is not a multiple of %u)",
                           kernel, c->grid[0], c->grid[1], c->grid[2], cluster[0], cluster[1], cluster[2],
                           given ? "" : " (its __cluster_dims__)", axes[i], c->grid[i], cluster[i]);
    unsigned long long size = (unsigned long long)cluster[0] * cluster[1] * cluster[2];
    int portable = gx_cluster_max_blocks(t->cc_major, t->cc_minor, 0);
    int most = gx_cluster_max_blocks(t->cc_major, t->cc_minor, 1);
    if (size > (unsigned long long)most)
        return gx_fail(error, GX_ERR_USAGE,
                       "launch of '%s' with a cluster of %ux%ux%u = %llu blocks: %s allows at most "
                       "%d (%d portably%s)",
                       kernel, cluster[0], cluster[1], cluster[2], size, t->where, most, portable,
                       most > portable ? ", more as a non-portable size" : "");
    if (t->max_active_clusters == 0)
        return gx_fail(error, GX_ERR_USAGE,
                       "launch of '%s' with a cluster of %llu blocks of %u threads and %u bytes of "
                       "dynamic shared memory: no such cluster can be resident on %s (cuOccupancyMaxActiveClusters is "
                       "0: the blocks' registers or shared memory do not fit on the SMs of one GPC); use fewer blocks "
                       "per cluster or fewer resources per block",
                       kernel, size, c->block[0] * c->block[1] * c->block[2], c->shared_bytes, t->where);
    return GX_OK;
}

static int check_cooperative(const char *kernel, const gx_launch_config *c, const gx_launch_target *t, gx_error *error)
{
    if (!c->cooperative)
        return GX_OK;
    if (!t->cooperative_launch)
        return gx_fail(error, GX_ERR_USAGE,
                       "cooperative launch of '%s': %s does not support cooperative launches "
                       "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0)",
                       kernel, t->where);
    unsigned long long blocks = (unsigned long long)c->grid[0] * c->grid[1] * c->grid[2];
    unsigned cluster[3];
    if (gx_launch_cluster(c, t, cluster) && t->max_active_clusters > 0) {
        unsigned long long clusters = blocks / ((unsigned long long)cluster[0] * cluster[1] * cluster[2]);
        if (clusters > (unsigned long long)t->max_active_clusters)
            return gx_fail(error, GX_ERR_USAGE,
                           "cooperative launch of '%s': %llu clusters, but at most %d can be "
                           "resident at once on %s (cuOccupancyMaxActiveClusters); a grid-wide sync would never "
                           "return: launch at most %d clusters",
                           kernel, clusters, t->max_active_clusters, t->where, t->max_active_clusters);
    }
    if (t->blocks_per_sm < 0 || t->sm_count <= 0)
        return GX_OK;
    unsigned long long resident = (unsigned long long)t->blocks_per_sm * (unsigned long long)t->sm_count;
    if (blocks > resident)
        return gx_fail(error, GX_ERR_USAGE,
                       "cooperative launch of '%s': a grid of %llu blocks, but at most %llu of "
                       "them can be resident at once on %s (%d per SM for a block of %u threads and %u bytes of "
                       "dynamic shared memory x %d SMs%s); a grid-wide sync would never return: launch at most %llu "
                       "blocks (a grid-stride loop covers the rest)",
                       kernel, blocks, resident, t->where, t->blocks_per_sm, c->block[0] * c->block[1] * c->block[2],
                       c->shared_bytes, t->sm_count,
                       t->sm_count_is_model ? ", the largest GPU of the architecture, as modelled" : "", resident);
    return GX_OK;
}

int gx_launch_check_attributes(const char *kernel, const gx_launch_config *config, const gx_launch_target *target,
                               gx_error *error)
{
    if (config->programmatic && target->cc_major < 9)
        return gx_fail(error, GX_ERR_USAGE,
                       "programmatic launch of '%s': programmatic dependent launch needs compute "
                       "capability 9.0 (Hopper) or newer, and %s is %d.%d",
                       kernel, target->where, target->cc_major, target->cc_minor);
    if (check_cluster(kernel, config, target, error))
        return error->kind;
    return check_cooperative(kernel, config, target, error);
}
