import os

from noise_filter import Admin, Endpoint, Matcher, MemoryStore, RedisStore

store = RedisStore(url=os.environ["REDIS_URL"]) if "REDIS_URL" in os.environ else MemoryStore()
admin = Admin(store)
key = admin.create_key("acme", "ci").key  # shown once; stored as its hash
admin.add_patterns("acme", ["acme-widget.js"])

endpoint = Endpoint(store)
response = endpoint.handle("GET", "/v1/filters?minConfidence=0.9",
                           [("Authorization", f"Bearer {key}")])
print(response.status, response.header("cache-control"))  # 200 public, max-age=300
print(Matcher.from_response(response.body).is_noise({"frames": ["https://x.example/acme-widget.js"]}))  # True
