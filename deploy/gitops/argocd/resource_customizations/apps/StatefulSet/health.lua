-- sts-safe-rollout: the health of an apps/v1 StatefulSet the policy marked `<prefix>/guarded: "true"`:
-- Progressing until its staged rollout is complete (the built-in check says Healthy before any pod has
-- the new revision), Suspended while paused, Degraded when it needs a person; any other set as the
-- built-in check judges it. The rule is sts-stepper's `rollout::health` (stepper/src/rollout/health.rs,
-- docs/gitops.md). No library call: argocd-cm scripts get Lua's base, package and table libraries only.

-- sts-stepper's --annotation-prefix (`make deploy-manifests ANNOTATION_PREFIX=…` renders it).
local prefix = "safe-rollout.dev"
local annotations = obj.metadata.annotations or {}
-- The annotation's value, nil when absent or empty.
local function annotation(name)
  local value = annotations[prefix .. "/" .. name]
  if value ~= "" then return value end
end
local function result(code, message)
  return { status = code, message = message }
end

local status = obj.status
if status == nil then
  return result("Progressing", "waiting for the StatefulSet controller: no status yet")
end
local generation, observed = obj.metadata.generation, status.observedGeneration
if observed == nil or observed ~= generation then
  return result("Progressing", "waiting for the StatefulSet controller to observe generation "
    .. (generation or "none") .. " (observed " .. (observed or "none") .. ")")
end

-- Absent fields as the API server defaults them (omitted counters are 0).
local spec = obj.spec
local strategy = spec.updateStrategy or {}
local replicas = spec.replicas or 1
local partition = (strategy.rollingUpdate or {}).partition or 0
local ready, updated = status.readyReplicas or 0, status.updatedReplicas or 0
local revision = status.updateRevision or "(none)"

-- What keeps the set from fully Ready, or nil.
local function readiness()
  local min_ready, available = spec.minReadySeconds or 0, status.availableReplicas or 0
  if ready ~= replicas then
    return ready .. " of " .. replicas .. " pods Ready"
  elseif min_ready > 0 and available ~= replicas then
    return available .. " of " .. replicas .. " pods available (minReadySeconds " .. min_ready .. ")"
  end
end

-- Unguarded (OnDelete, another strategy, forced, or never staged by the policy): the built-in rule.
local rolling = strategy.type == nil or strategy.type == "RollingUpdate"
local why
if not rolling then
  why = strategy.type == "OnDelete" and "OnDelete" or "updateStrategy " .. strategy.type
elseif annotation("force-rolling-update") == "true" then
  why = "force-rolling-update"
elseif annotation("guarded") ~= "true" then
  why = "no " .. prefix .. "/guarded mark"
end
if why ~= nil then
  local unguarded, waiting = "unguarded (" .. why .. "): ", readiness()
  if waiting ~= nil then
    return result("Progressing", unguarded .. waiting)
  elseif rolling and updated < replicas - partition then
    local pods = updated .. " of " .. (replicas - partition) .. " pods on " .. revision
    return result("Progressing", unguarded .. pods)
  end
  return result("Healthy", unguarded .. ready .. " of " .. replicas .. " pods Ready")
end

-- Guarded: needs a person, paused, staged or stepping, pods not Ready, or complete.
if annotation("degraded-reason") ~= nil then
  return result("Degraded", annotation("degraded-reason"))
elseif annotation("paused") == "true" then
  return result("Suspended", annotation("paused-reason") or "paused")
elseif status.updateRevision ~= status.currentRevision or updated < replicas then
  local pods = updated .. " of " .. replicas .. " pods on " .. revision
  local message = "rolling out: " .. pods
  if partition >= replicas then
    message = "staged, waiting for the stepper: " .. pods
  elseif partition > 0 then
    message = "stepping: " .. pods .. ", partition " .. partition
  end
  if partition > 0 and annotation("blocked-reason") ~= nil then
    message = message .. "; next step blocked: " .. annotation("blocked-reason")
    -- what an approval gate waits for: the pods, the revision, when asked and the deadline
    if annotation("approval-pending") ~= nil then
      message = message .. ": " .. annotation("approval-pending")
    end
  end
  return result("Progressing", message)
elseif readiness() ~= nil then
  return result("Progressing", "waiting for pods: " .. readiness())
end
return result("Healthy", "rollout complete: " .. replicas .. " pods on " .. revision .. ", all Ready")
