/* The host's monotonic clock, in seconds: what the core and the bindings time their own work by
   (compiles, profiles, children, the tune's wall-time breakdown). */
#ifndef GX_CLOCK_H
#define GX_CLOCK_H

double gx_clock_s(void);

#endif
