-- For tests/reports/test_recursion_views.py: Lua code that re-enters the
-- interpreter loop through C, so luaV_execute recurses through luaD_call
-- and the C functions between: pcall, table.sort's comparator,
-- string.gsub's replacement function, metamethods.  Deterministic.
local V = setmetatable({}, {__add = function(a, b) return a.n + b.n end})
local function vec(n) return setmetatable({n = n}, getmetatable(V)) end

local function nested(k)
  if k == 0 then return 0 end
  local ok, v = pcall(nested, k - 1)
  return ok and v + 1 or -1
end

local sum = 0
for i = 1, 40 do
  sum = sum + nested(i % 9)
  local t = {}
  for j = 1, 30 do t[j] = (j * 7919 + i) % 101 end
  table.sort(t, function(a, b) return a > b end)
  sum = sum + t[1]
  local s = string.gsub("a b c d e f", "%a", function(c) return c:upper() end)
  sum = sum + #s + (vec(i) + vec(2))
end
print(sum)
