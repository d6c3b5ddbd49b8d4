-- f16, bf16, fp8_e4m3, fp8_e5m2, i16 and u16 without a GPU: host buffers (fill, random, copy_from a
-- table, to_table, element access, compare in ulps), scalars and their bit patterns, struct fields,
-- planned buffers. Rounding is the CUDA headers' (tests/unit/test_narrow_oracle.cpp checks every
-- pattern); here the values a script sees.
local T = dofile(gpuexp.script_dir .. "/../testlib.lua")

-- scalars: the value as stored, and its bits
T.eq(gpuexp.f16(1).bits, 0x3c00, "f16 1.0")
T.eq(gpuexp.f16(1 / 3).value, 0.333251953125, "f16 1/3 to nearest")
T.eq(gpuexp.f16(65504).bits, 0x7bff, "f16 max")
T.eq(gpuexp.f16(65520).value, math.huge, "f16 overflows to infinity at the midpoint (ties to even)")
T.eq(gpuexp.f16(65519.99).value, 65504.0, "f16 just under the midpoint stays finite")
T.eq(gpuexp.f16(0 / 0).bits, 0x7fff, "f16 NaN is the canonical 0x7fff")
T.eq(gpuexp.f16(-0.0).bits, 0x8000, "f16 -0 keeps its sign")
T.eq(gpuexp.f16(2 ^ -25).bits, 0, "half the smallest subnormal ties to 0")
T.eq(gpuexp.f16(2 ^ -25 * 1.0000001).bits, 1, "above it rounds up")
T.eq(gpuexp.f16(1 + 2 ^ -11).bits, 0x3c00, "tie to even (down)")
T.eq(gpuexp.f16(1 + 3 * 2 ^ -11).bits, 0x3c02, "tie to even (up)")
T.eq(gpuexp.bf16(1).bits, 0x3f80, "bf16 1.0")
T.eq(gpuexp.bf16(3.14159).value, 3.140625, "bf16 pi")
T.eq(gpuexp.bf16(0 / 0).bits, 0x7fff, "bf16 NaN")
T.eq(gpuexp.bf16(1e39).value, math.huge, "bf16 overflow to infinity")
T.eq(gpuexp.fp8_e4m3(448).bits, 0x7e, "e4m3 max")
T.eq(gpuexp.fp8_e4m3(1000).value, 448.0, "e4m3 saturates (SATFINITE)")
T.eq(gpuexp.fp8_e4m3(-math.huge).value, -448.0, "e4m3 -inf saturates")
T.eq(gpuexp.fp8_e4m3(0 / 0).bits, 0x7f, "e4m3 NaN")
T.eq(gpuexp.fp8_e4m3(0.3).value, 0.3125, "e4m3 0.3")
T.eq(gpuexp.fp8_e5m2(1e6).value, 57344.0, "e5m2 saturates")
T.eq(gpuexp.fp8_e5m2(math.huge).bits, 0x7b, "e5m2 inf saturates to max finite")
T.eq(gpuexp.fp8_e5m2(2 ^ -16).bits, 1, "e5m2 smallest subnormal")
T.ok(gpuexp.from_bits("fp8_e5m2", 0x7c).value == math.huge, "e5m2 0x7c is infinity")
T.ok(gpuexp.from_bits("fp8_e4m3", 0x7f).value ~= gpuexp.from_bits("fp8_e4m3", 0x7f).value, "e4m3 0x7f is NaN")
T.eq(gpuexp.from_bits("bf16", 0xc0490fdb >> 16).value, -3.140625, "bf16 from bits")
T.eq(gpuexp.i16(-32768).value, -32768, "i16 min")
T.eq(gpuexp.u16(65535).bits, 65535, "u16 max")
T.raises(function() gpuexp.i16(32768) end, "gpuexp.i16: 32768 is out of range", "i16 range")
T.raises(function() gpuexp.u16(-1) end, "out of range", "u16 range")
T.raises(function() gpuexp.f16("x") end, "gpuexp.f16: expected a number, got string", "f16 of a string")
T.raises(function() gpuexp.from_bits("f16", 0x10000) end, "f16 takes a pattern of 16 bits", "f16 pattern too wide")
T.raises(function() gpuexp.from_bits("f17", 1) end, "unknown type 'f17'", "unknown type")
T.eq(tostring(gpuexp.f16(0.5)), "gpuexp.f16(0.5)", "tostring")

-- host buffers of each type
for _, case in ipairs{
  {"f16", 2, 1 / 3, 0.333251953125}, {"bf16", 2, 1 / 3, 0.333984375},
  {"fp8_e4m3", 1, 1 / 3, 0.34375}, {"fp8_e5m2", 1, 1 / 3, 0.3125},
  {"i16", 2, -1234, -1234}, {"u16", 2, 60000, 60000},
} do
  local name, size, input, stored = case[1], case[2], case[3], case[4]
  local b = gpuexp.host(name, 8)
  T.eq(b.bytes, 8 * size, name .. " bytes"); T.eq(b.type, name, name .. " type")
  b:fill(input)
  T.eq(b[8], stored, name .. " fill rounds as the headers")
  b[2] = input
  T.eq(b:get(2), stored, name .. " element set")
  b:copy_from({input, 0, 1})
  local t = b:to_table(1, 3)
  T.eq(t[1], stored, name .. " copy_from table"); T.eq(t[3], 1, name .. " one")
  local low = name == "u16" and 0 or -2
  b:random{seed = 3, min = low, max = 2}
  local c = gpuexp.host(name, 8):random{seed = 3, min = low, max = 2}
  T.ok((b:compare(c, {rtol = 0, atol = 0})), name .. " random is reproducible")
  for i = 1, 8 do T.ok(b[i] >= low and b[i] <= 2, name .. " random range") end
end
T.raises(function() gpuexp.host("i16", 1):fill(40000) end, "fill value 40000 does not fit in i16", "i16 fill range")
T.raises(function() gpuexp.host("u16", 1):copy_from({1.5}) end, "element 1 must be an integer for a u16 buffer", "u16 table")

-- random f16 values are the f32 generator's values rounded to f16
local r16, r32 = gpuexp.host("f16", 100):random{seed = 9}, gpuexp.host("f32", 100):random{seed = 9}
for i = 1, 100 do T.eq(r16[i], gpuexp.f16(r32[i]).value, "random f16 = rounded f32 at " .. i) end

-- compare in the type's terms: one f16 ulp matches by default, two do not
local x, y = gpuexp.host("f16", 4), gpuexp.host("f32", 4)
x:copy_from({1, 2, 3, 4}); y:copy_from({1, 2, 3, 4})
local ok, info = x:compare(y)
T.ok(ok, "equal"); T.eq(info.max_ulp_error, 0, "0 ulps"); T.eq(info.epsilon, 2 ^ -10, "f16 epsilon"); T.eq(info.type, "f16", "type")
x[3] = 3 + 2 * 2 ^ -9 -- two ulps above 3 (the spacing at 3 is 2^-9)
y[2] = 2 + 2 ^ -9 -- the reference one ulp above x[2]... well within rtol = epsilon
ok, info = x:compare(y)
T.ok(not ok, "two ulps off is a mismatch"); T.eq(info.mismatches, 1, "one mismatch")
T.eq(info.first_mismatch, 3, "first mismatch"); T.eq(info.first_ulps, 2, "first mismatch in ulps")
T.eq(info.max_ulp_error, 2, "max ulps")
T.ok((x:compare(y, {ulps = 2, rtol = 0})), "ulps = 2 accepts it")
T.ok(not (x:compare(y, {ulps = 0, rtol = 0})), "ulps = 0 refuses the one-ulp element too")
x[4] = 0 / 0
ok, info = x:compare(y, {ulps = 1000})
T.eq(info.mismatches, 1, "a NaN never matches"); T.eq(info.first_mismatch, 4, "the NaN"); T.eq(info.max_ulp_error, math.huge, "NaN is infinitely many ulps")
T.raises(function() gpuexp.host("i32", 4):compare(gpuexp.host("i32", 4), {ulps = 1}) end,
  "compare: ulps applies to float buffers, not i32", "ulps on integers")

-- struct fields: a GroupNorm-like parameter block with f16/bf16/fp8 fields and a hole
local P = gpuexp.layout{{"scale", "f16"}, {"flag", "bool"}, {"shift", "bf16"}, {"q", "fp8_e4m3"}, {"n", "i32"}, {"s", "i16"}}
T.eq(P.offsets.shift, 4, "bf16 aligned to 2"); T.eq(P.offsets.q, 6, "fp8 at 6"); T.eq(P.offsets.n, 8, "i32 at 8")
T.eq(P.size, 16, "size"); T.eq(P.align, 4, "align")
local packed = P:pack{{scale = 1 / 3, flag = true, shift = 3.14159, q = 1000, n = 7, s = -2}}
T.eq(string.unpack("<I2", packed, 1), 0x3555, "f16 field bits")
T.eq(string.unpack("<I2", packed, 5), 0x4049, "bf16 field bits")
T.eq(string.unpack("<I1", packed, 7), 0x7e, "fp8 field saturated")
local row = P:unpack(packed)[1]
T.eq(row.scale, 0.333251953125, "f16 field read back"); T.eq(row.shift, 3.140625, "bf16 field read back")
T.eq(row.q, 448.0, "fp8 field read back"); T.eq(row.s, -2, "i16 field")
T.eq(#gpuexp.struct{{"f16", 1}, {"f16", {1, 2, 3}}}.data, 8, "anonymous struct with f16 fields")
T.raises(function() P{scale = "x", flag = true, shift = 1, q = 1, n = 1, s = 1} end, "struct.scale: expected a number, got string",
  "f16 field type")
