-- portcullis: asks an external authentication service whether a request may go on
-- (the auth-url key), with HAProxy's own HTTP client (core.httpclient, HAProxy >= 2.5).
--
-- The configuration calls the action with: URL, method ("*": the client's), the glob
-- lists of headers copied from the client to the service, from the service to the
-- backend on success, and from the service to the client on failure ("-": none), the
-- timeout of one attempt in milliseconds, and "1" when a refused client is redirected by
-- the configuration rather than given the service's answer.
--
-- Outcome, in transaction variables the configuration reads:
--   txn.auth_ok = true       a 2xx answer: the request goes on;
--   txn.auth_refused = true  another answer below 500: refused (the service's answer is
--                            sent here, unless the configuration redirects);
--   neither                  no usable answer (refused connection, timeout, 5xx, error):
--                            the configuration answers 503. A failure of this script
--                            lands here too, so it fails closed.

-- Headers that describe a message's framing or connection, never copied from one
-- message to another.
local framing = {
  ["host"] = true, ["content-length"] = true, ["transfer-encoding"] = true,
  ["connection"] = true, ["keep-alive"] = true, ["proxy-connection"] = true,
  ["te"] = true, ["trailer"] = true, ["upgrade"] = true,
}
-- Headers of the service's answer that describe that answer only: not copied onto the
-- request sent to the backend.
local answer_only = {
  ["content-type"] = true, ["content-encoding"] = true, ["date"] = true, ["server"] = true,
}

-- HAProxy 2.6's client sends these methods only.
local sendable = { GET = "get", HEAD = "head", POST = "post", PUT = "put", DELETE = "delete" }

-- "x-auth-*,x-user" to anchored Lua patterns; nil for "-".
local function patterns(list)
  if list == "-" then
    return nil
  end
  local result = {}
  for glob in list:gmatch("[^,]+") do
    local escaped = glob:gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0"):gsub("%*", ".*"):gsub("%?", ".")
    result[#result + 1] = "^" .. escaped .. "$"
  end
  return result
end

local function matches(name, list, excluded)
  if list == nil or framing[name] or (excluded and excluded[name]) then
    return false
  end
  for _, pattern in ipairs(list) do
    if name:match(pattern) then
      return true
    end
  end
  return false
end

local function ask(txn, url, method, headers_request, headers_succeed, headers_fail, timeout, redirect)
  local wanted = patterns(headers_request)
  local headers = {}
  for name, values in pairs(txn.http:req_get_headers()) do
    if matches(name, wanted) then
      local list = {}
      for _, value in pairs(values) do
        list[#list + 1] = value
      end
      headers[name] = list
    end
  end
  if method == "*" then
    method = txn.sf:method()
  end
  local call = sendable[method]
  if call == nil then
    headers["x-forwarded-method"] = { method }
    call = "get"
  end
  local client = core.httpclient()
  local ok, response = pcall(client[call], client, {
    url = url,
    headers = headers,
    timeout = tonumber(timeout),
  })
  if not ok or response == nil or response.status == nil
      or response.status < 100 or response.status >= 500 then
    return
  end
  if response.status >= 200 and response.status < 300 then
    local succeed = patterns(headers_succeed)
    -- A list without wildcards names the headers the service vouches for: a client's
    -- own headers of these names are removed, set or not by the service.
    if succeed ~= nil and not headers_succeed:find("[%*%?]") then
      for name, _ in pairs(txn.http:req_get_headers()) do
        if matches(name, succeed) then
          txn.http:req_del_header(name)
        end
      end
    end
    for name, values in pairs(response.headers or {}) do
      if matches(name, succeed, answer_only) then
        txn.http:req_del_header(name)
        for _, value in pairs(values) do
          txn.http:req_add_header(name, value)
        end
      end
    end
    txn:set_var("txn.auth_ok", true)
    return
  end
  txn:set_var("txn.auth_refused", true)
  if redirect == "1" then
    return
  end
  local reply = txn:reply()
  reply:set_status(response.status)
  local fail = patterns(headers_fail)
  for name, values in pairs(response.headers or {}) do
    if matches(name, fail) then
      for _, value in pairs(values) do
        reply:add_header(name, value)
      end
    end
  end
  if response.body ~= nil and #response.body > 0 then
    reply:set_body(response.body)
  end
  return reply
end

core.register_action("portcullis-auth", { "http-req" }, function(txn, ...)
  txn:set_var("txn.auth_ok", false)
  -- txn:done ends the action by raising: it stays outside the protected call.
  local ok, reply = pcall(ask, txn, ...)
  if not ok then
    txn:Warning("auth-url: " .. tostring(reply))
  elseif reply ~= nil then
    txn:done(reply)
  end
end, 7)
