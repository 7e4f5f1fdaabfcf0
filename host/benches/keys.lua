-- wrk script of load.sh, paired.sh and soak.sh: GET $NF_PATH with the keys
-- of the file $NF_KEYS (one per line), taking turns, so none reaches its
-- limit; with $NF_ACCEPT set, every request also sends it as
-- `Accept-Encoding` (what a browser or `curl --compressed` sends).
local keys = {}
for line in io.lines(os.getenv("NF_KEYS")) do keys[#keys + 1] = line end
local accept = os.getenv("NF_ACCEPT")
if accept == "" then accept = nil end
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", os.getenv("NF_PATH"), {
    ["Authorization"] = "Bearer " .. keys[(n % #keys) + 1],
    ["Accept-Encoding"] = accept,
  })
end
