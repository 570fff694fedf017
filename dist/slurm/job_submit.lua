--[[
job_submit.lua - gpufleet's placement advice in Slurm's job_submit/lua
(slurm.conf: JobSubmitPlugins=lua; this file next to slurm.conf).

For a job asking for N GPUs on a node, it looks up the advice of
`gpufleet slurm advise --gpus 1,2,4,8 --lines` (written every minute by a
timer, docs/slurm.md) for that shape and
  - notes it in the job's Comment ("gpufleet: node=n7 gpus=4,5"), unless
    the user wrote a comment;
  - with GPUFLEET_STEER=1 in slurmctld's environment, and when the user
    named no nodes, sets the job's required node (--nodelist) to the node
    where it fragments least.  Slurm 22.05 cannot be asked for GPU
    indexes, so those stay advice (gres.conf's Links= let Slurm's own
    choice favour linked GPUs).

It never runs gpufleet itself: job_submit runs inside slurmctld with its
locks held, so it only reads one small file, and an absent, stale or
unreadable file changes nothing.  The advice is for the moment it was
written; steering is only worth it where the file is refreshed often.

  GPUFLEET_ADVICE  the advice file (default /run/gpufleet/slurm-advice.txt)
  GPUFLEET_STEER   1: set the required node; else only the comment
]]

local advice_path = os.getenv("GPUFLEET_ADVICE") or
	"/run/gpufleet/slurm-advice.txt"
local steer = os.getenv("GPUFLEET_STEER") == "1"

-- GPUs per node asked for: "gres:gpu:2", "gres:gpu:h100:2" (22.05) or
-- "gres/gpu:2", "gres/gpu=2" (later releases); nil when none
local function gpus_per_node(job_desc)
	local t = job_desc.tres_per_node
	if t == nil then
		return nil
	end
	local n = string.match(t, "gpu[^,;=]*:(%d+)") or
		string.match(t, "gpu[^,;]*=(%d+)")
	return n and tonumber(n) or nil
end

-- The advice line for n GPUs: node and GPU indexes, or nil
local function advice_for(n)
	local f = io.open(advice_path, "r")
	if f == nil then
		return nil
	end
	local node, idx
	for line in f:lines() do
		local g = string.match(line, "^job=shape gpus=(%d+) ")
		if g and tonumber(g) == n then
			node = string.match(line, " node=(%S+)")
			idx = string.match(line, " gpu_idx=(%S+)")
			break
		end
	end
	f:close()
	if node == nil or node == "none" then
		return nil
	end
	return node, idx
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	local n = gpus_per_node(job_desc)
	if n == nil or (job_desc.min_nodes ~= nil and job_desc.min_nodes > 1
		and job_desc.min_nodes < 4294967294) then
		return slurm.SUCCESS -- not a one-node GPU job
	end
	local node, idx = advice_for(n)
	if node == nil then
		return slurm.SUCCESS
	end
	if job_desc.comment == nil then
		job_desc.comment = "gpufleet: node=" .. node .. " gpus=" .. idx
	end
	if steer and job_desc.req_nodes == nil then
		job_desc.req_nodes = node
	end
	slurm.log_info("gpufleet: uid %u, %d GPUs: node %s GPUs %s%s",
		submit_uid, n, node, idx, steer and " (steered)" or "")
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end
