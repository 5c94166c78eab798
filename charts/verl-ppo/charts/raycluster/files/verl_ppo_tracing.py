"""Ray tracing startup hook shipped by the verl-ppo chart (`--tracing-startup-hook=verl_ppo_tracing:setup_tracing`).

Ray calls setup_tracing() with no arguments in every driver and worker process of the cluster. It sends
spans over OTLP to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT with OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (http/protobuf
or grpc), both set by the chart from raycluster.tracing.startupHook (the generic OTEL_EXPORTER_OTLP_ENDPOINT
and _PROTOCOL, as an injected agent may set them, serve when those are unset). A tracer provider installed before
(APMPlus' auto-instrumentation installs one) is left alone. Tracing must never stop Ray: without the
OpenTelemetry packages the hook logs a warning and returns.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("verl_ppo_tracing")

# Exporter module of each OTLP protocol (packages opentelemetry-exporter-otlp-proto-http / -grpc).
EXPORTERS = {
    "http/protobuf": "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "grpc": "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
}


def setup_tracing() -> None:
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        logger.warning("verl-ppo tracing is off: OpenTelemetry is not installed in this image (%s); "
                       "install opentelemetry-sdk and opentelemetry-exporter-otlp to send spans", error)
        _turn_off_ray_tracing()
        return
    installed = trace.get_tracer_provider()
    if not isinstance(installed, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        logger.info("verl-ppo tracing: keeping the installed tracer provider %s", type(installed).__name__)
        return
    endpoint = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not endpoint:
        logger.info("verl-ppo tracing: no OTLP endpoint set and no tracer provider installed; spans are dropped")
        return
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    exporter = _exporter(protocol or "http/protobuf")
    if exporter is None:
        return
    provider = TracerProvider(resource=Resource.create())
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)


def _turn_off_ray_tracing() -> None:
    """Ray switched tracing on before calling the hook; its span wrappers then fail every .remote() call
    when OpenTelemetry is missing (Ray 2.49), so the hook switches it back off for this process."""
    try:
        from ray.util.tracing import tracing_helper
    except ImportError:
        return
    tracing_helper._global_is_tracing_enabled = False


def _exporter(protocol: str):
    """An OTLP span exporter for the protocol (it reads the endpoint from the environment), or None."""
    module_name = EXPORTERS.get(protocol)
    if module_name is None:
        logger.warning("verl-ppo tracing is off: unknown OTLP protocol %r (use one of %s)", protocol, ", ".join(EXPORTERS))
        return None
    try:
        module = __import__(module_name, fromlist=["OTLPSpanExporter"])
    except ImportError as error:
        logger.warning("verl-ppo tracing is off: the OTLP %s exporter is not installed (%s)", protocol, error)
        return None
    return module.OTLPSpanExporter()
