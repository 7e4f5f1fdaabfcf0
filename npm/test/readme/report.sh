npx noise-filter report events.json                       # Sentry API events or per-event JSON, Discover CSV, .gz too
npx noise-filter report events.json --html report.html    # one page: charts, sortable tables, nothing fetched
npx noise-filter report events.json --pattern 're:^TypeError: Cannot read properties of undefined'
npx noise-filter report events.json --accept 1 --emit patterns > patterns.json
