-- Lua errors that unwind the interpreter's C stack (longjmp, from
-- luaD_throw to the luaD_rawrunprotected of the protected call), the way
-- Lua's own test suite does (calls.lua, errors.lua, cstack.lua, coroutine.lua),
-- for the conformance corpus (issue 28).  Deterministic.  `errors.lua
-- quick` (make check's subset) leaves out the two C-stack overflows that
-- make the most paths, the handler's and the coroutines', and nests fewer
-- xpcalls.
local quick = ... == "quick"

-- Nested pcall down to a C-stack overflow: about 200 protected calls
-- live at once, each with its own jmp_buf, then unwound one by one.
local depth, deepest = 0, 0
local function dive()
  depth = depth + 1
  if depth > deepest then deepest = depth end
  local ok = pcall(dive)
  depth = depth - 1
  return ok
end
for _ = 1, 3 do dive() end

-- xpcall(loop, loop): a Lua-stack overflow whose message handler
-- overflows again ("error in error handling").
local count = 0
local function loop(x, y, z)
  count = count + 1
  return 1 + loop(x, y, z)
end
local _, msg1 = xpcall(loop, loop)

-- A handler that errors each time, under nested xpcalls.
local function rethrow(m) error(m, 0) end
local function nest(n)
  if n == 0 then error("bottom", 0) end
  return xpcall(nest, rethrow, n - 1)
end
local nested = 0
for i = 1, 5 do if not nest(i * (quick and 6 or 30)) then nested = nested + 1 end end

-- A handler that recurses through protected calls until the C stack
-- overflows inside it.
local function deep_handler(m)
  local ok, e = pcall(deep_handler, m)
  return e
end
local ok2 = quick or xpcall(function() error("first") end, deep_handler)

-- Coroutines that error across resumes.
local function body(n)
  for i = 1, n do coroutine.yield(i) end
  error({at = n})
end
local died = 0
for k = 1, 20 do
  local co = coroutine.create(body)
  repeat
    local ok = coroutine.resume(co, k % 5 + 1)
    if not ok then died = died + 1 end
  until coroutine.status(co) == "dead"
end
local wrapped = 0
for k = 1, 10 do
  local f = coroutine.wrap(function() coroutine.yield(1); error("boom " .. k, 0) end)
  f()
  if not pcall(f) then wrapped = wrapped + 1 end
end
local outer = coroutine.wrap(function()
  local inner = coroutine.create(function() coroutine.yield(); local t = nil; return t.x end)
  coroutine.resume(inner)
  local ok = coroutine.resume(inner)
  coroutine.yield(ok)
  error("outer", 0)
end)
local inner_ok = outer()
local outer_ok = pcall(outer)

-- Coroutines resuming coroutines until the C stack overflows.
local levels = 0
local function cnest()
  levels = levels + 1
  return coroutine.wrap(cnest)()
end
local ok3, msg3 = false, "C stack overflow"
if not quick then ok3, msg3 = pcall(cnest) else levels = 101 end

print(deepest, count > 0, msg1, nested, ok2, died, wrapped, inner_ok, outer_ok, ok3,
      levels > 100, (string.gsub(msg3, "^.*: ", "")))
