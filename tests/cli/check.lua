
gpuexp.check(2 + 2 == 5, "2 + 2 is %d", 5)
