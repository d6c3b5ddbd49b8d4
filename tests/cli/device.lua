print(gpuexp.device())
