-- The Lua workload of the conformance corpus: pcall and error (longjmp in
-- the interpreter, from several depths), closures, tables, strings,
-- coroutines.  Deterministic.
local function deep(n)
  if n == 0 then error({code = 7}) end
  return deep(n - 1) + 1
end

local caught = 0
for i = 1, 30 do
  local ok, e = pcall(deep, i % 7)
  if not ok and type(e) == "table" then caught = caught + e.code end
  local ok2 = pcall(function() local t = nil; return t.x end)
  if not ok2 then caught = caught + 1 end
end

local function nested(k)
  return pcall(function()
    if k > 0 then
      local ok, e = nested(k - 1)
      error("level " .. k .. (ok and "" or ":" .. tostring(e)), 0)
    end
    return k
  end)
end
local okn, msg = nested(5)

local words = {}
for i = 1, 2000 do words[#words + 1] = string.format("w%04d", (i * 7919) % 2000) end
table.sort(words)
local s = table.concat(words, ",", 1, 50)

local co = coroutine.wrap(function()
  for i = 1, 10 do coroutine.yield(i * i) end
end)
local sum = 0
for _ = 1, 10 do sum = sum + co() end

local ok3 = select(1, xpcall(function() return deep(3) end, function(m) return "handled" end))
print(caught, okn, #msg, #s, sum, ok3)
