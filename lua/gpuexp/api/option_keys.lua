-- The refusal of an unknown key in a script function's table of options, said as the C bindings
-- say it (l_check_options): "WHAT: unknown option 'KEY' (did you mean 'K'?) (known: A, B)". One
-- place for the Lua side's functions, so the wording and the hint cannot drift apart.
local M = {}

-- M.check(spec, known, what [, level]): raises a usage error at the script's line for the first key
-- of spec not in known (a set: {name = true}); spec must be a table. level: the stack level of the
-- script's call, as error() counts it from here (default 3: the caller of check's caller).
function M.check(spec, known, what, level)
  for key in pairs(spec) do
    if not known[key] then
      local names = {}
      for name in pairs(known) do names[#names + 1] = name end
      table.sort(names)
      gpuexp.error("usage", string.format("%s: unknown option '%s'%s (known: %s)", what, tostring(key),
        gpuexp._did_you_mean(tostring(key), names), table.concat(names, ", ")), level or 3)
    end
  end
end

return M
