from typing import Any, Callable, Dict, Iterable

from noise_filter import Endpoint, MemoryStore

endpoint = Endpoint(MemoryStore())  # or the store your keys are in


def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    target = environ.get("PATH_INFO", "") + ("?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else "")
    headers = [(k[5:].replace("_", "-").lower(), v) for k, v in environ.items() if k.startswith("HTTP_")]
    r = endpoint.handle(environ["REQUEST_METHOD"], target, headers)
    start_response(f"{r.status} -", r.headers + [("content-length", str(len(r.body)))])
    return [r.body]
