extern "C" __global__ void k(float *o)
{
  o[0] = missing;
}
