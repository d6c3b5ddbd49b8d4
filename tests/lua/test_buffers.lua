-- Host buffers (no GPU): typed elements, fills, copies, comparisons, and bad input.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

local a = gpuexp.host("f32", 1000)
T.eq(a.count, 1000, "count"); T.eq(#a, 1000, "#"); T.eq(a.bytes, 4000, "bytes")
T.eq(a.type, "f32", "type"); T.eq(a.kind, "pageable", "kind")
a:random{seed = 5, min = 2, max = 3}
for i = 1, 1000, 37 do T.ok(a[i] >= 2 and a[i] < 3, "random range at " .. i) end
local b = gpuexp.host("f32", 1000):random{seed = 5, min = 2, max = 3}
local same, info = a:compare(b, {rtol = 0, atol = 0})
T.ok(same, "same seed, same values"); T.eq(info.mismatches, 0, "no mismatches")
b:random{seed = 6, min = 2, max = 3}
local differ, info2 = a:compare(b, {rtol = 0, atol = 0})
T.ok(not differ, "other seed differs"); T.ok(info2.mismatches > 990, "nearly all differ")

a:fill(1.5)
T.eq(a[1000], 1.5, "fill")
a[3] = 7
T.eq(a:get(3), 7.0, "set/get")
a:copy_from({10, 20, 30}, {offset = 10})
T.eq(table.concat(a:to_table(10, 5), ","), "1.5,10.0,20.0,30.0,1.5", "copy_from table at offset")
b:copy_from(a)
T.ok((a:compare(b)), "copy_from buffer")
b[500] = b[500] + 1e-3
local close, details = b:compare(a, {rtol = 1e-2})
T.ok(close, "within rtol")
local far, d2 = b:compare(a, {rtol = 1e-6})
T.ok(not far, "outside rtol"); T.eq(d2.first_mismatch, 500, "first mismatch (1-based)")
T.near(d2.max_abs_error, 1e-3, 1e-6, "max abs error")

local ints = gpuexp.host("i32", 4):copy_from({1, -2, 3, 2147483647})
T.eq(ints[4], 2147483647, "i32 max")
T.raises(function() ints[1] = 2147483648 end, "does not fit in i32")
T.raises(function() ints[1] = 1.5 end, "must be an integer")
T.raises(function() ints:fill("x") end, "must be a number")
local u8 = gpuexp.host("u8", 3):copy_from({0, 255, 7})
T.eq(u8[2], 255, "u8")
T.raises(function() u8:copy_from({256}) end, "does not fit in u8")
local f64 = gpuexp.host("f64", 2):copy_from({1 / 3, 2})
T.eq(f64[1], 1 / 3, "f64 keeps double precision")
local i64 = gpuexp.host("i64", 1):copy_from({9007199254740993})
T.eq(i64[1], 9007199254740993, "i64 beyond 2^53")

T.raises(function() return a[0] end, "index 0 out of range 1..1000")
T.raises(function() return a[1001] end, "out of range")
T.raises(function() a:copy_from({1, 2}, {offset = 999}) end, "do not fit")
T.raises(function() a:copy_from(ints) end, "cannot copy i32 elements into a f32 buffer")
T.raises(function() gpuexp.host("f12", 3) end, "unknown element type 'f12'")
T.raises(function() gpuexp.host("f32", -1) end, "must be >= 0")
T.raises(function() a:random{seed = 1, mn = 0} end, "unknown option 'mn'")
T.raises(function() a:random{min = 2, max = 1} end, "must not exceed")
T.raises(function() a.count = 3 end, "no field 'count' to set")
local c = gpuexp.host("f32", 2)
c:free()
T.raises(function() c:fill(1) end, "freed")
c:free() -- twice is fine
do
  local scoped <close> = gpuexp.host("f32", 10)
  scoped:fill(1)
end
T.eq(gpuexp.f32(2.5).value, 2.5, "scalar value"); T.eq(gpuexp.u32(7).type, "u32", "scalar type")
T.raises(function() gpuexp.i32(1.5) end, "expected an integer")
T.raises(function() gpuexp.u32(-1) end, "out of range")
T.raises(function() gpuexp.f32("x") end, "expected a number")
T.done()
