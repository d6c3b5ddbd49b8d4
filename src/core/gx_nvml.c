#include "gx_nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The few NVML entry points gpuexp reads, declared here (the toolkit ships no nvml.h); NVML's C
   ABI: a status int, opaque device handles. */
typedef int nvml_return;
typedef struct nvml_device *nvml_device;
enum { NVML_SUCCESS = 0, NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1 };

static struct {
    nvml_return (*init)(void);
    const char *(*error_string)(nvml_return);
    nvml_return (*by_uuid)(const char *, nvml_device *);
    nvml_return (*energy)(nvml_device, unsigned long long *);
    nvml_return (*power)(nvml_device, unsigned *);
    nvml_return (*temperature)(nvml_device, int, unsigned *);
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    nvml_return (*clock)(nvml_device, int, unsigned *);
    nvml_return (*app_clock)(nvml_device, int, unsigned *);
    nvml_return (*power_limit)(nvml_device, unsigned *);
} nvml;
static char load_problem[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(load_problem, sizeof load_problem, "NVML is not here: dlopen(libnvidia-ml.so.1) failed: %s",
                 dlerror());
        return;
    }
    *(void **)&nvml.init = dlsym(library, "nvmlInit_v2");
    *(void **)&nvml.error_string = dlsym(library, "nvmlErrorString");
    *(void **)&nvml.by_uuid = dlsym(library, "nvmlDeviceGetHandleByUUID");
    *(void **)&nvml.energy = dlsym(library, "nvmlDeviceGetTotalEnergyConsumption");
    *(void **)&nvml.power = dlsym(library, "nvmlDeviceGetPowerUsage");
    *(void **)&nvml.temperature = dlsym(library, "nvmlDeviceGetTemperature");
    *(void **)&nvml.reasons = dlsym(library, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nvml.reasons) /* its name before R535 */
        *(void **)&nvml.reasons = dlsym(library, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&nvml.clock = dlsym(library, "nvmlDeviceGetClockInfo");
    *(void **)&nvml.app_clock = dlsym(library, "nvmlDeviceGetApplicationsClock");
    *(void **)&nvml.power_limit = dlsym(library, "nvmlDeviceGetEnforcedPowerLimit");
    if (!nvml.init || !nvml.by_uuid || !nvml.error_string) {
        snprintf(load_problem, sizeof load_problem, "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByUUID");
        nvml.init = NULL;
        return;
    }
    nvml_return status = nvml.init();
    if (status != NVML_SUCCESS) {
        snprintf(load_problem, sizeof load_problem, "nvmlInit_v2 failed: %s", nvml.error_string(status));
        nvml.init = NULL;
    }
}

int gx_nvml_read(const char *uuid, gx_telemetry *t, gx_error *error)
{
    memset(t, 0, sizeof *t);
    pthread_once(&once, load);
    if (!nvml.init)
        return gx_fail(error, GX_ERR_SYSTEM, "%s", load_problem);
    nvml_device device;
    nvml_return status = nvml.by_uuid(uuid, &device);
    if (status != NVML_SUCCESS)
        return gx_fail(error, GX_ERR_SYSTEM, "nvmlDeviceGetHandleByUUID(%s) failed: %s", uuid,
                       nvml.error_string(status));
    unsigned value;
    t->has_energy = nvml.energy && nvml.energy(device, &t->energy_mj) == NVML_SUCCESS;
    if ((t->has_power = nvml.power && nvml.power(device, &value) == NVML_SUCCESS))
        t->power_w = value / 1000.0;
    t->has_temperature =
        nvml.temperature && nvml.temperature(device, NVML_TEMPERATURE_GPU, &t->temperature_c) == NVML_SUCCESS;
    t->has_reasons = nvml.reasons && nvml.reasons(device, &t->reasons) == NVML_SUCCESS;
    t->has_sm_clock = nvml.clock && nvml.clock(device, NVML_CLOCK_SM, &t->sm_clock_mhz) == NVML_SUCCESS;
    t->has_app_clock = nvml.app_clock && nvml.app_clock(device, NVML_CLOCK_SM, &t->app_clock_mhz) == NVML_SUCCESS;
    if ((t->has_power_limit = nvml.power_limit && nvml.power_limit(device, &value) == NVML_SUCCESS))
        t->power_limit_w = value / 1000.0;
    return GX_OK;
}

void gx_nvml_reason_names(unsigned long long reasons, char *out, size_t size)
{
    /* nvmlClocksEventReason* bits, as nvml.h defines them */
    static const struct {
        unsigned long long bit;
        const char *name;
    } names[] = {
        {0x1, "gpu_idle"},       {0x2, "applications_clocks"},  {0x4, "sw_power_cap"},         {0x8, "hw_slowdown"},
        {0x10, "sync_boost"},    {0x20, "sw_thermal_slowdown"}, {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake"},
        {0x100, "display_clock"}};
    out[0] = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (reasons & names[i].bit)
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? "," : "", names[i].name);
}
