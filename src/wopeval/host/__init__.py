"""wopeval.host: the OpenWOP v2 HTTP host (``wopeval serve``; docs/host.md).

``wopeval.host.app.create_app(config)`` builds the ASGI app. Modules, in request order:
``config`` (the deployment file), ``auth`` (bearer keys → tenants), ``ids`` (run-id path forms),
``discovery``, ``create`` and ``runs`` (``POST /runs``, snapshot, cancel, summary),
``events_api`` (SSE and poll), ``suites`` (``evalSuiteRef`` resolution), ``manager`` (runs
executing in-process), ``errors`` (the v2 error envelope).
"""
