-- The Lua workload of `make bench` (bench/lua_driver.c sets N): what Lua
-- programs spend their time on, in one deterministic loop.  Recursion and
-- closures (the interpreter's call path), tables (hashing, resizing, sort
-- with a Lua comparator), strings (format, concat, gsub, find), pcall and
-- error (setjmp/longjmp inside the interpreter), coroutines (lua_resume).
-- Returns an integer checksum that every build must agree on.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function tables(k)
  local t = {}
  for i = 1, 200 do t[i] = (i * 7919 + k) % 1000 end
  table.sort(t, function(a, b) return a > b end)
  local h = {}
  for i = 1, 200 do h["k" .. t[i]] = i end
  local s = 0
  for key, v in pairs(h) do s = s + #key + v end
  return s
end

local function strings(k)
  local parts = {}
  for i = 1, 40 do parts[#parts + 1] = string.format("%d:%s", i * k, ("x"):rep(i % 5)) end
  local s = table.concat(parts, ",")
  local n = 0
  for w in s:gmatch("%d+") do n = n + #w end
  return n + #s:gsub("x", "yy")
end

local function fails(d)
  if d == 0 then error("bottom") end
  return fails(d - 1)
end

local function errors(k)
  local ok, e = pcall(fails, k % 6)
  return ok and 0 or #e
end

local function generator(k)
  return coroutine.wrap(function()
    for i = 1, 20 do coroutine.yield(i * k) end
  end)
end

local sum = 0
for k = 1, N do
  sum = sum + fib(12) + tables(k) + strings(k) + errors(k)
  local g = generator(k)
  for _ = 1, 20 do sum = sum + g() end
  sum = sum % 1000000007
end
return sum
