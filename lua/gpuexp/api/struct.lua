-- C structs from Lua, laid out as C lays them out: each field at the next multiple of its
-- alignment, the struct aligned to its widest field (or more, as alignas asks), its size a
-- multiple of that. A struct passed by value is a gpuexp.Bytes (gpuexp.struct, layout(values));
-- an array of structs is a string for a device buffer (layout:pack, layout:upload).
local M = {}

-- type -> string.pack format (little-endian, as every CUDA GPU and host is), size in bytes
local scalars = {
  i8 = {"i1", 1}, u8 = {"I1", 1}, bool = {"I1", 1}, i16 = {"i2", 2}, u16 = {"I2", 2},
  i32 = {"i4", 4}, u32 = {"I4", 4}, i64 = {"i8", 8}, u64 = {"I8", 8},
  f32 = {"f", 4}, f64 = {"d", 8}, ptr = {"I8", 8},
  -- stored as their bit patterns, rounded as the CUDA headers round (gpuexp.f16(x).bits)
  f16 = {"I2", 2}, bf16 = {"I2", 2}, fp8_e4m3 = {"I1", 1}, fp8_e5m2 = {"I1", 1},
}
local narrow = {f16 = true, bf16 = true, fp8_e4m3 = true, fp8_e5m2 = true}

-- the range of each integer type (i64 and u64 take any Lua integer: u64 as its bit pattern)
local integer_ranges = {i8 = {-128, 127}, u8 = {0, 255}, i16 = {-32768, 32767}, u16 = {0, 65535},
  i32 = {-2147483648, 2147483647}, u32 = {0, 4294967295}}

-- Limits that keep a layout something a kernel parameter or a buffer element can be, and that
-- string.pack can build: one struct at most 1 MiB and 100000 values, aligned to at most 4096.
M.MAX_BYTES, M.MAX_VALUES, M.MAX_ALIGN = 1 << 20, 100000, 4096

local Layout = {}
Layout.__index = Layout

local function fail(message, level) gpuexp.error("usage", message, (level or 2) + 1) end

local function is_layout(value) return getmetatable(value) == Layout end

local function align_up(offset, align) return (offset + align - 1) // align * align end

-- A TMA descriptor (gpuexp.tensor_map): a CUtensorMap, 128 opaque bytes aligned to 64.
local tensor_map = {format = "c128", size = 128, align = 64, kind = "tensor_map"}

-- A field's type: {format, size, align, layout (nested)}.
local function field_type(kind, where)
  if is_layout(kind) then return {format = kind.format, size = kind.size, align = kind.align, layout = kind} end
  if kind == "tensor_map" then return tensor_map end
  local scalar = scalars[kind]
  if not scalar then
    local names = {}
    for name in pairs(scalars) do names[#names + 1] = name end
    table.sort(names)
    fail(string.format("%s: unknown type '%s' (one of %s, tensor_map, or a gpuexp.layout)", where, tostring(kind),
      table.concat(names, ", ")), 3)
  end
  return {format = scalar[1], size = scalar[2], align = scalar[2], kind = kind}
end

-- gpuexp.layout({{name, type [, count]}, ...} [, {align = N}]) -> Layout: size, align, offsets[name],
-- fields; layout(values) -> Bytes; layout:pack(rows) / layout:unpack(data) / layout:upload(rows)
function M.layout(fields, options)
  if type(fields) ~= "table" or #fields == 0 then fail("layout: expected a list of {name, type [, count]}") end
  options = options or {}
  if type(options) ~= "table" then fail("layout: expected a table of options {align = N}") end
  require("gpuexp.api.option_keys").check(options, {align = true}, "layout")
  local layout = setmetatable({fields = {}, offsets = {}, align = 1, values = 0, tensor_maps = 0}, Layout)
  local parts, offset = {"<"}, 0
  for i, spec in ipairs(fields) do
    if type(spec) ~= "table" or type(spec[1]) ~= "string" then
      fail(string.format("layout: field %d must be {name, type [, count]}", i))
    end
    local name, count = spec[1], spec[3] or 1
    if layout.offsets[name] then fail("layout: field '" .. name .. "' appears twice") end
    if math.type(count) == "float" and count == math.floor(count) then count = math.tointeger(count) or count end
    if math.type(count) ~= "integer" or count < 1 then fail("layout: field '" .. name .. "' count must be an integer >= 1") end
    local t = field_type(spec[2], "layout: field '" .. name .. "'")
    local at = align_up(offset, t.align)
    local values = (t.layout and t.layout.values or 1) * count
    if count > M.MAX_BYTES or at + t.size * count > M.MAX_BYTES or layout.values + values > M.MAX_VALUES then
      fail(string.format("layout: field '%s' (%d x %s) makes the struct larger than gpuexp takes (%d bytes, %d " ..
        "values); pass big arrays in a device buffer", name, count, t.layout and "struct" or t.kind, M.MAX_BYTES,
        M.MAX_VALUES))
    end
    layout.values = layout.values + values
    layout.tensor_maps = layout.tensor_maps + count * (t.layout and t.layout.tensor_maps or (t == tensor_map and 1 or 0))
    if at > offset then parts[#parts + 1] = string.rep("x", at - offset) end
    parts[#parts + 1] = string.rep(t.format, count)
    layout.fields[i] = {name = name, type = t, count = spec[3] and count, offset = at}
    layout.offsets[name] = at
    layout.align = math.max(layout.align, t.align)
    offset = at + t.size * count
  end
  local align = options.align or layout.align
  if math.type(align) == "float" and align == math.floor(align) then align = math.tointeger(align) or align end -- 2^4
  if math.type(align) ~= "integer" or align < layout.align or align > M.MAX_ALIGN or align & (align - 1) ~= 0 then
    fail(string.format("layout: align must be a power of two of at least %d (and at most %d), got %s", layout.align,
      M.MAX_ALIGN, tostring(align)))
  end
  layout.align = align
  layout.size = align_up(offset, align)
  if layout.size > offset then parts[#parts + 1] = string.rep("x", layout.size - offset) end
  layout.format = table.concat(parts)
  assert(string.packsize(layout.format) == layout.size)
  return layout
end

-- A value for a field of type t, flattened into out (pointers from buffers, kept in keep).
local function flatten(t, value, out, keep, where)
  if t.layout then
    if type(value) ~= "table" then fail(where .. ": expected a table for the nested struct", 4) end
    t.layout:_flatten(value, out, keep, where)
  elseif t.kind == "ptr" then
    if value == nil or value == 0 then
      out[#out + 1] = 0
    elseif type(value) == "userdata" and value.address then
      out[#out + 1] = value.address
      keep[#keep + 1] = value
    elseif type(value) == "table" and rawget(value, "kind") == "planned" then
      out[#out + 1] = 0 -- a plan's buffer has no address: the struct is laid out and checked, never read
      keep[#keep + 1] = value
    elseif math.type(value) == "integer" then
      out[#out + 1] = value
    else
      fail(where .. ": a pointer field takes a device buffer, an integer address or nil", 4)
    end
  elseif t.kind == "tensor_map" then
    local ok, maps, size = pcall(function() return value.tensor_maps, value.size end)
    if not ok or maps ~= 1 or size ~= 128 then
      fail(where .. ": a tensor_map field takes a TMA descriptor from gpuexp.tensor_map{...}, got " .. tostring(value), 4)
    end
    out[#out + 1] = value.data
    keep[#keep + 1] = value -- it keeps its buffer alive
  elseif t.kind == "bool" then
    out[#out + 1] = value and 1 or 0
  else
    if type(value) ~= "number" then fail(string.format("%s: expected a number, got %s", where, type(value)), 4) end
    if t.kind:sub(1, 1) ~= "f" and not narrow[t.kind] and math.type(value) ~= "integer" then
      fail(string.format("%s: %s takes an integer, got %s", where, t.kind, tostring(value)), 4)
    end
    local range = integer_ranges[t.kind]
    if range and (value < range[1] or value > range[2]) then
      fail(string.format("%s: %d does not fit in %s (%d to %d)", where, value, t.kind, range[1], range[2]), 4)
    end
    out[#out + 1] = narrow[t.kind] and gpuexp[t.kind](value).bits or value
  end
end

function Layout:_flatten(values, out, keep, where)
  for _, field in ipairs(self.fields) do
    local value = values[field.name]
    local path = where .. "." .. field.name
    if value == nil and (field.count or field.type.layout) then fail(path .. " is missing (every field needs a value)", 3) end
    if field.count then
      if type(value) ~= "table" or #value ~= field.count then
        fail(string.format("%s: expected a list of %d values", path, field.count), 3)
      end
      for i = 1, field.count do flatten(field.type, value[i], out, keep, path .. "[" .. i .. "]") end
    else
      if value == nil and field.type.kind ~= "ptr" and field.type.kind ~= "bool" then
        fail(path .. " is missing (every field needs a value)", 3)
      end
      flatten(field.type, value, out, keep, path)
    end
  end
  for name in pairs(values) do
    if self.offsets[name] == nil then fail(string.format("%s: no field '%s' in the layout", where, tostring(name)), 3) end
  end
end

local function pack_one(layout, values, keep, where)
  local flat = {}
  layout:_flatten(values, flat, keep, where)
  local ok, data = pcall(string.pack, layout.format, table.unpack(flat))
  if not ok then fail(where .. ": " .. tostring(data):gsub("^.-: ", ""), 3) end
  return data
end

-- layout{field = value, ...} -> Bytes: the struct by value, for a kernel parameter
function Layout:__call(values)
  if type(values) ~= "table" then fail("layout: expected a table of field values") end
  local keep = {}
  return gpuexp.bytes(pack_one(self, values, keep, "struct"), {align = self.align, keep = keep,
    tensor_maps = self.tensor_maps})
end

-- layout:pack({rows}) -> a string of #rows structs, as a C array of them
function Layout:pack(rows)
  if type(rows) ~= "table" then fail("pack: expected a list of tables") end
  local parts = {}
  for i, row in ipairs(rows) do parts[i] = pack_one(self, row, {}, "row " .. i) end
  return table.concat(parts)
end

local function rebuild(layout, flat, at)
  local row = {}
  for _, field in ipairs(layout.fields) do
    local function one()
      if field.type.layout then
        local value
        value, at = rebuild(field.type.layout, flat, at)
        return value
      end
      local value = flat[at]
      at = at + 1
      if field.type.kind == "bool" then value = value ~= 0 end
      if narrow[field.type.kind] then value = gpuexp.from_bits(field.type.kind, value).value end
      return value
    end
    if field.count then
      local list = {}
      for i = 1, field.count do list[i] = one() end
      row[field.name] = list
    else
      row[field.name] = one()
    end
  end
  return row, at
end

-- layout:unpack(data) -> {rows}: data holds whole structs
function Layout:unpack(data)
  if type(data) ~= "string" or #data % self.size ~= 0 then
    fail(string.format("unpack: expected a string of a multiple of %d bytes", self.size))
  end
  local rows = {}
  for position = 1, #data, self.size do
    local flat = table.pack(string.unpack(self.format, data, position))
    rows[#rows + 1] = rebuild(self, flat, 1)
  end
  return rows
end

-- layout:upload(rows [, device]) -> a device buffer ("u8") holding the structs, for a pointer parameter
function Layout:upload(rows, device)
  local data = self:pack(rows)
  local buffer = (device or gpuexp.device()):alloc("u8", #data)
  buffer:write(data)
  return buffer
end

-- layout:download(buffer) -> {rows} read back from a buffer of these structs
function Layout:download(buffer)
  return self:unpack(buffer:read())
end

function Layout:__tostring()
  return string.format("gpuexp.Layout(%d bytes, aligned to %d, %d fields)", self.size, self.align, #self.fields)
end

-- gpuexp.struct({{type, value}, ...} [, {align = N}]) -> Bytes: an anonymous struct by value, e.g.
-- gpuexp.struct{{"f32", 1.5}, {"i32", n}, {"ptr", buffer}}; an array field is {type, {values}}
function M.struct(fields, options)
  if type(fields) ~= "table" or #fields == 0 then fail("struct: expected a list of {type, value}") end
  local layout_fields, values = {}, {}
  for i, spec in ipairs(fields) do
    if type(spec) ~= "table" then fail(string.format("struct: field %d must be {type, value}", i)) end
    local kind, value = spec[1], spec[2]
    -- a list of values is an array field; a plan's buffer (a table too) is one pointer
    local count = (type(value) == "table" and rawget(value, "kind") ~= "planned" and not is_layout(kind)) and #value or nil
    if count == 0 then fail(string.format("struct: field %d has an empty list", i)) end
    layout_fields[i] = {"_" .. i, kind, count}
    values["_" .. i] = value
  end
  return M.layout(layout_fields, options)(values)
end

return M
