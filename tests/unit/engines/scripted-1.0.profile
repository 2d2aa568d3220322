# The profile of engines.ScriptedEngine's scripted engine, in the form `onnx-bcast probe-engine`
# writes to engines/profiles/<engine>-<version>.profile: with its adapter, the whole engine.
name = scripted-1.0
description = a scripted engine that runs a per-channel Add and refuses the rest
passes = upgrade-legacy-broadcast, align-ranks
classes = same, scalar, per-channel
max_rank = 4
