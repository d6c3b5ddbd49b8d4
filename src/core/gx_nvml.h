/* GPU telemetry through NVML (libnvidia-ml.so.1, loaded with dlopen like the rest): energy, power,
   temperature, clocks and the reasons the clocks are held down. gpuexp only reads: it never sets
   a clock, a power limit or any other setting. */
#ifndef GX_NVML_H
#define GX_NVML_H

#include <stddef.h>

#include "gx_error.h"

typedef struct gx_telemetry {
    int has_energy, has_power, has_temperature, has_reasons, has_sm_clock, has_app_clock, has_power_limit;
    unsigned long long energy_mj; /* total energy since the driver loaded (Volta and newer) */
    double power_w;               /* the board's power draw now (NVML averages it over about 1 s) */
    unsigned temperature_c;
    unsigned long long reasons; /* NVML's clocks event reasons (bit mask) */
    unsigned sm_clock_mhz, app_clock_mhz;
    double power_limit_w; /* the enforced power limit */
} gx_telemetry;

/* Reads the GPU of this UUID ("GPU-..."): what NVML has; a value it cannot give is left out
   (has_* 0). Fails with GX_ERR_SYSTEM when NVML cannot be loaded or does not know the GPU. */
int gx_nvml_read(const char *uuid, gx_telemetry *telemetry, gx_error *error);
/* The names of the reasons set in `reasons` ("sw_power_cap,hw_slowdown"; "" when none). */
void gx_nvml_reason_names(unsigned long long reasons, char *out, size_t size);

#endif
