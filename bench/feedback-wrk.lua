-- wrk script of bench/feedback-throughput.sh (FeedbackThroughputBenchmark --client wrk): POSTs
-- the request bodies of a file, one JSON body per line, in order, each thread from its own
-- offset and cycling. Usage: wrk ... -s bench/feedback-wrk.lua URL -- BODIES_FILE THREADS
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"

local next_thread = 0

function setup(thread)
  thread:set("thread_index", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  bodies = {}
  for line in io.lines(args[1]) do
    bodies[#bodies + 1] = line
  end
  i = math.floor(#bodies * thread_index / tonumber(args[2]))
end

function request()
  i = i % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
