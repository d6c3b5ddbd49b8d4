if gpuexp.out then print("out: " .. gpuexp.out) end
print("args: " .. table.concat(arg, " ") .. " " .. #gpuexp.args)
