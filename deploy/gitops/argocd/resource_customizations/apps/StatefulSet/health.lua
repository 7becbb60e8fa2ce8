-- sts-safe-rollout: the rollout health of an apps/v1 StatefulSet, for Argo CD
-- (argocd-cm `resource.customizations.health.apps_StatefulSet`, which Argo CD prefers to its built-in
-- Go check). The built-in check calls a set staged behind a partition "Healthy: partitioned roll out
-- complete" before any pod has the new revision; this one reports the staged rollout as Progressing
-- until it is really complete, Suspended while paused, and Degraded when it needs a person.
--
-- The rule is sts-stepper's `rollout::health` (stepper/src/rollout/health.rs), which `sts-stepper
-- status` prints; docs/gitops.md explains it. The `gitops-health` tests run this script in Lua 5.1
-- and check that it agrees with the stepper on every fixture and simulated rollout.
--
-- Only Lua's base functions are used: an argocd-cm health script runs without the `string`, `math`
-- and `table` libraries unless `resource.customizations.useOpenLibs.apps_StatefulSet` is set. A field
-- of an unexpected type gives Degraded with a message, never a Lua error (which Argo CD reports as
-- Unknown for the whole Application).

-- The annotation prefix (sts-stepper --annotation-prefix); `make deploy-manifests ANNOTATION_PREFIX=…`
-- renders it.
local prefix = "safe-rollout.dev"

local function is_map(v)
  return type(v) == "table" and v[1] == nil
end

local function is_int(v)
  return type(v) == "number" and v % 1 == 0
end

-- t[k] when t is an object, else nil.
local function field(t, k)
  if is_map(t) then
    return t[k]
  end
  return nil
end

-- The first field read below that has an unexpected type, as "<path> is not <kind>".
local bad = nil
local function check(v, kind, path)
  if bad ~= nil or v == nil then
    return
  end
  local ok
  if kind == "an integer" then
    ok = is_int(v)
  elseif kind == "a string" then
    ok = type(v) == "string"
  else
    ok = is_map(v)
  end
  if not ok then
    bad = path .. " is not " .. kind
  end
end

local meta = obj.metadata
check(meta, "an object", "metadata")
local generation = field(meta, "generation")
check(generation, "an integer", "metadata.generation")
local annotations = field(meta, "annotations")
check(annotations, "an object", "metadata.annotations")
local function annotation(name)
  local key = prefix .. "/" .. name
  local v = field(annotations, key)
  check(v, "a string", "metadata.annotations[" .. key .. "]")
  return v
end
local forced = annotation("force-rolling-update") == "true"
local paused = annotation("paused") == "true"
local paused_reason = annotation("paused-reason")
local degraded = annotation("degraded-reason")
local blocked = annotation("blocked-reason")

local spec = obj.spec
check(spec, "an object", "spec")
local replicas = field(spec, "replicas")
check(replicas, "an integer", "spec.replicas")
local min_ready = field(spec, "minReadySeconds")
check(min_ready, "an integer", "spec.minReadySeconds")
local strategy = field(spec, "updateStrategy")
check(strategy, "an object", "spec.updateStrategy")
local strategy_type = field(strategy, "type")
check(strategy_type, "a string", "spec.updateStrategy.type")
local rolling = field(strategy, "rollingUpdate")
check(rolling, "an object", "spec.updateStrategy.rollingUpdate")
local partition = field(rolling, "partition")
check(partition, "an integer", "spec.updateStrategy.rollingUpdate.partition")

local status = obj.status
check(status, "an object", "status")
local function status_field(name, kind)
  local v = field(status, name)
  check(v, kind, "status." .. name)
  return v
end
local observed = status_field("observedGeneration", "an integer")
local ready = status_field("readyReplicas", "an integer")
local available = status_field("availableReplicas", "an integer")
local updated = status_field("updatedReplicas", "an integer")
local current_revision = status_field("currentRevision", "a string")
local update_revision = status_field("updateRevision", "a string")

local function show(v)
  if is_int(v) then
    return "" .. v
  end
  return "none"
end
local function result(code, message)
  return { status = code, message = message }
end
local not_observed = "waiting for the StatefulSet controller to observe generation "
  .. show(generation) .. " (observed " .. show(observed) .. ")"

-- 1. The controller has not observed the spec (first, as Flux's own pre-check does).
if is_int(generation) and is_int(observed) and generation ~= observed then
  return result("Progressing", not_observed)
end
if bad ~= nil then
  return result("Degraded", "unreadable StatefulSet: " .. bad)
end
if status == nil then
  return result("Progressing", "waiting for the StatefulSet controller: no status yet")
end
if observed == nil or generation == nil then
  return result("Progressing", not_observed)
end

-- The API server's defaults.
replicas = replicas or 1
min_ready = min_ready or 0
partition = partition or 0
ready = ready or 0
available = available or 0
updated = updated or 0
local revision = update_revision or "(none)"

-- What keeps the set from fully Ready, or nil.
local function readiness()
  if ready ~= replicas then
    return ready .. " of " .. replicas .. " pods Ready"
  end
  if min_ready > 0 and available ~= replicas then
    return available .. " of " .. replicas .. " pods available (minReadySeconds " .. min_ready .. ")"
  end
  return nil
end

-- 2. Unguarded (OnDelete, force-rolling-update, another strategy): as the built-in rule.
local rolling_update = strategy_type == nil or strategy_type == "RollingUpdate"
if not rolling_update or forced then
  local why
  if strategy_type == "OnDelete" then
    why = "OnDelete"
  elseif rolling_update then
    why = "force-rolling-update"
  else
    why = "updateStrategy " .. strategy_type
  end
  local waiting = readiness()
  if waiting ~= nil then
    return result("Progressing", "unguarded (" .. why .. "): " .. waiting)
  end
  if rolling_update and updated < replicas - partition then
    return result("Progressing", "unguarded (" .. why .. "): " .. updated .. " of "
      .. (replicas - partition) .. " pods on " .. revision)
  end
  return result("Healthy", "unguarded (" .. why .. "): " .. ready .. " of " .. replicas .. " pods Ready")
end

-- 3. Something a person must act on, recorded by the stepper.
if degraded ~= nil and degraded ~= "" then
  return result("Degraded", degraded)
end

-- 4. Paused: by a person, a canary pause point, or a failed check.
if paused then
  if paused_reason ~= nil and paused_reason ~= "" then
    return result("Suspended", paused_reason)
  end
  return result("Suspended", "paused")
end

-- 5. A staged update: staged behind the partition, stepping, or rolled by the controller at 0.
if update_revision ~= current_revision or updated < replicas then
  local pods = updated .. " of " .. replicas .. " pods on " .. revision
  local message
  if partition >= replicas then
    message = "staged, waiting for the stepper: " .. pods
  elseif partition > 0 then
    message = "stepping: " .. pods .. ", partition " .. partition
  else
    message = "rolling out: " .. pods
  end
  if partition > 0 and blocked ~= nil and blocked ~= "" then
    message = message .. "; next step blocked: " .. blocked
  end
  return result("Progressing", message)
end

-- 6. Pods not Ready (or not available with minReadySeconds).
local waiting = readiness()
if waiting ~= nil then
  return result("Progressing", "waiting for pods: " .. waiting)
end

-- 7. Complete.
return result("Healthy", "rollout complete: " .. replicas .. " pods on " .. revision .. ", all Ready")
