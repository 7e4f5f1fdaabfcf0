-- wrk script of load.sh and soak.sh: GET $NF_PATH with the keys of the
-- file $NF_KEYS (one per line), taking turns, so none reaches its limit.
local keys = {}
for line in io.lines(os.getenv("NF_KEYS")) do keys[#keys + 1] = line end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", os.getenv("NF_PATH"),
    { ["Authorization"] = "Bearer " .. keys[(n % #keys) + 1] })
end
