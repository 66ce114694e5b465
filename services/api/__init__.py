"""The REST API's use cases for one long-running process: operations and background jobs."""
