from noise_filter import Matcher

matcher = Matcher.builtin()  # the built-in catalog, as the service lists it by default

# What you have: a message, an exception (with its traceback), a Sentry event,
# or a dict of the core's texts (type, message, frames, userAgent).
print(matcher.is_noise("Script error."))  # True
try:
    raise ValueError("invoice total is negative")
except ValueError as error:
    print(matcher.is_noise(error))  # False: a real error
event = {"type": "TypeError", "message": "Cannot redefine property: ethereum",
         "frames": ["chrome-extension://abc/inpage.js"]}
print([(m.id, m.field) for m in matcher.classify(event).matches][0])  # ('ethereum-redefine', 'message')

# Your own patterns; a batch in one call.
own = Matcher.from_patterns([{"id": "ours", "pattern": r"^Boom \d+$", "type": "regex"}])
print(own.patterns[0].type, own.is_noise_many(["boom 42", "boom"]))  # regex [True, False]
