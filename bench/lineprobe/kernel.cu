// Probe kernel: one loop whose lines differ in cost (a division, an FP64 op, a load)
extern "C" __global__ void probe_kernel(float *out, const float *in, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = in[i];
  double d = acc;
  for (int k = 0; k < iters; ++k) {
    acc = acc * 1.0001f + 0.5f;            // line 8: cheap FMA
    acc = acc / (1.0f + (float)(k & 7));   // line 9: a division
    d = d * 1.000001 + 1e-7;               // line 10: FP64
  }
  out[i] = acc + (float)d;
}
