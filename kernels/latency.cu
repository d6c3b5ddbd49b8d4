// A pointer chase (seed 003, phase 0: the latency of every level): one thread follows
// next[i] for `hops` loads, each depending on the last, so every load pays the full latency of
// wherever the line is. Cycles from clock64, nanoseconds from %globaltimer.
extern "C" __global__ void chase(const unsigned *next, unsigned start, long long hops, unsigned long long *out)
{
    unsigned i = start;
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64();
    for (long long h = 0; h < hops; h++)
        i = next[i];
    long long c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = (unsigned long long)(c1 - c0);
    out[1] = t1 - t0;
    out[2] = i; // keeps the chain live
}
