-- a kernel that does not compile
local p = gpuexp.compile{file = "bad_kernel.cu", arch = "sm_80"}
