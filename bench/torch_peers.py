# Peers measured with PyTorch on the same GPU, for gpuexp calibrate and the SAXPY study:
# a large device-to-device copy (read + write bytes) and torch's add_ (SAXPY's 12 bytes per element),
# timed with CUDA events, median of 50 after warm-up (as triton.testing.do_bench does).
import statistics, torch

def median_ms(fn, reps=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(); fn(); stop.record(); stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)

n = 256 * 1024 * 1024  # 1 GiB of float32, as gpuexp calibrate copies
a = torch.rand(n, device="cuda"); b = torch.empty_like(a)
ms = median_ms(lambda: b.copy_(a))
print(f"torch_copy_gbps {2 * 4 * n / (ms * 1e-3) / 1e9:.0f}")
m = 32 * 1024 * 1024
x = torch.rand(m, device="cuda"); y = torch.rand(m, device="cuda")
ms = median_ms(lambda: y.add_(x, alpha=2.5))
print(f"torch_add_effective_gbps {12 * m / (ms * 1e-3) / 1e9:.0f} ({ms:.4f} ms for 32M)")
