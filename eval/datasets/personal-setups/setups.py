# ruff: noqa: E501  (hand-written requests and their labels read best one per line)
"""The six personal setups: who each person is, the servers they run, and the requests they type.

Written by hand by the team before anyone ran the product on them. ``build.py`` turns this into the
benchmark format. Each request is a tuple:

- ``("p", text, slot, ...)``: plain, one server can do it; each slot is ``"alias/tool|alias/tool"``
  (interchangeable tools; retrieving any one fills the slot).
- ``("a", text, slot)``: ambiguous, two or more configured servers could honestly do it; the slot lists
  the fitting tools of all of them.
- ``("u", text, "e" | "n")``: unanswerable; ``e`` everyday (nothing in the setup is near), ``n``
  near-domain (a configured server's domain, but none of its tools, nor any other, does it).

A text starting with ``~`` carries a deliberate typo (the ``~`` is dropped; style ``typo``).
"""

from __future__ import annotations

from typing import Any

MSC, LIV, GW = "msc_bench_dev", "livemcpbench", "gateway-demo"

BACKEND_DEV: dict[str, Any] = {
    "who": "Priya, a backend developer on a Node/Python payments API: git, a Postgres on Supabase, Redis, "
    "Docker, Jira at work and Linear for her side project, two web search engines, package and CVE checkers.",
    "servers": {
        "git": (GW, "git"),
        "fs": (GW, "filesystem"),
        "fetch": (GW, "fetch"),
        "lin": (MSC, "Linear MCP Server"),
        "jira": (MSC, "Jira communication server MCP Server"),
        "ghr": (MSC, "GitHub Repository MCP Server"),
        "redis": (MSC, "Redis MCP Server"),
        "supa": (MSC, "Supabase MCP Server"),
        "dock": (LIV, "docker-mcp"),
        "sg": (MSC, "Semgrep MCP Server"),
        "pkgv": (MSC, "Package Version MCP Server"),
        "npm": (LIV, "NPM Sentinel MCP"),
        "c7": (LIV, "Context7 MCP - Up-to-date Code Docs For Any Prompt"),
        "brave": (MSC, "Brave Search MCP Server"),
        "tav": (MSC, "mcp-tavily-search"),
        "dd": (MSC, "Datadog MCP Server"),
        "osv": (MSC, "MCP Server For OSV"),
        "sonar": (MSC, "SonarCloud MCP Server"),
        "eol": (MSC, "EOL MCP Server"),
    },
    "queries": [
        # git
        (
            "p",
            "what's changed in /home/priya/code/billing-api that I haven't staged yet?",
            "git/git_diff_unstaged",
        ),
        ("p", "stage src/routes/invoices.ts and src/lib/tax.ts", "git/git_add"),
        ("p", "show me the last 5 commits", "git/git_log"),
        ("p", "~swich to the release/2.3 branch in ~/code/billing-api", "git/git_checkout"),
        ("p", "which local branches already contain commit 4f9a2c1?", "git/git_branch"),
        ("p", "how far has main drifted from feature/webhooks? show me the diff", "git/git_diff"),
        ("p", "oops, I staged the wrong files, unstage everything", "git/git_reset"),
        ("p", "what did config/settings.py look like back in commit a1b2c3d?", "git/git_show"),
        ("p", "commit what's staged with the message 'bump stripe sdk to 14.2'", "git/git_commit"),
        ("p", "~is my working tree clena?", "git/git_status"),
        ("p", "cut a branch hotfix/refund-rounding off release/2.3", "git/git_create_branch"),
        # filesystem
        ("p", "open ~/code/billing-api/.github/workflows/ci.yml", "fs/read_text_file|fs/read_file"),
        ("p", "find every .sql migration file under ~/code/billing-api/db", "fs/search_files"),
        ("p", "rename docs/old-setup.md to docs/setup.md", "fs/move_file"),
        ("p", "make a scratch/perf-tests folder in the project", "fs/create_directory"),
        ("p", "what's eating space in ~/Downloads? biggest files first", "fs/list_directory_with_sizes"),
        ("p", "in src/config.ts change the request timeout from 3000 to 10000", "fs/edit_file"),
        ("p", "which folders am I even allowed to touch from here?", "fs/list_allowed_directories"),
        # fetch
        ("p", "pull https://status.stripe.com and tell me if there's an ongoing incident", "fetch/fetch"),
        (
            "p",
            "get me the text of https://datatracker.ietf.org/doc/html/rfc9110, I need the caching part",
            "fetch/fetch",
        ),
        # Linear
        (
            "p",
            "open a Linear issue for the platform team: 'Retry webhooks with exponential backoff'",
            "lin/create_issue",
        ),
        ("p", "set ENG-214 in Linear to urgent and move it to In Review", "lin/update_issue"),
        ("p", "pull up Linear issue ENG-305 for me", "lin/get_issue"),
        ("p", "which teams exist in our Linear workspace?", "lin/list_teams"),
        (
            "p",
            "hey, can you look through Linear for anything we filed about the rate limiter?",
            "lin/search_issues",
        ),
        # Jira
        (
            "p",
            "run this JQL and give me 20 results: project = PAY AND status = 'To Do' ORDER BY created DESC",
            "jira/execute_jql|jira/get_only_ticket_name_and_description",
        ),
        ("p", "delete PAY-1043 in jira, it's a dupe", "jira/delete_ticket"),
        (
            "p",
            "attach the diagram at https://files.example.com/arch.png to PAY-88",
            "jira/add_attachment_from_public_url",
        ),
        (
            "p",
            "change the title of Jira ticket PAY-77 to 'Refunds fail for EUR invoices' and add the backend label",
            "jira/edit_ticket",
        ),
        (
            "p",
            "copy 'sequence.pdf' from confluence page 884122 onto PAY-91",
            "jira/add_attachment_from_confluence",
        ),
        (
            "p",
            "just titles and descriptions for the open bugs in jira project PAY, nothing else",
            "jira/get_only_ticket_name_and_description|jira/execute_jql",
        ),
        # GitHub repository contents
        ("p", "show me the folder layout of the stripe/stripe-node repo on GitHub", "ghr/get-repo-structure"),
        ("p", "what's in package.json of expressjs/express on github?", "ghr/get-file-content"),
        (
            "p",
            "load all the .go files from hashicorp/raft into context so we can talk through it",
            "ghr/get-repo-context",
        ),
        # Redis
        ("p", "store feature:new-checkout = on in redis, expire it after an hour", "redis/set"),
        ("p", "remove key session:8812 from redis", "redis/del"),
        ("p", "add user 42 with score 1300 to the leaderboard:weekly zset", "redis/zadd"),
        ("p", "who's on leaderboard:weekly with a score between 1000 and 2000?", "redis/zrangebyscore"),
        ("p", "put name=Priya and plan=pro into the hash user:42", "redis/hmset"),
        ("p", "kick member 'bot-7' out of the leaderboard:weekly sorted set", "redis/zrem"),
        # Supabase
        (
            "p",
            "what columns, indexes and foreign keys does public.invoices have in supabase?",
            "supa/get_table_schema",
        ),
        (
            "p",
            "on the supabase db run: select count(*) from orders where created_at > now() - interval '1 day'",
            "supa/execute_postgresql",
        ),
        ("p", "list all schemas in our supabase project and how big they are", "supa/get_schemas"),
        (
            "p",
            "flip supabase into unsafe mode for the database, I need to run an insert",
            "supa/live_dangerously",
        ),
        # docker
        ("p", "~what containers do i have on this machien?", "dock/list-containers"),
        ("p", "show me the logs of the postgres-dev container", "dock/get-logs"),
        (
            "p",
            "spin up a redis:7 container named cache-dev with port 6379 published",
            "dock/create-container",
        ),
        ("p", "deploy this docker compose yaml as the 'observability' project", "dock/deploy-compose"),
        # Semgrep / SonarCloud
        (
            "p",
            "run semgrep over ./services/auth with the p/owasp-top-ten ruleset",
            "sg/start_scan|sg/semgrep_scan",
        ),
        ("p", "is scan 7f3e finished yet?", "sg/get_scan_status"),
        ("p", "~which programing languages does semgrep suport?", "sg/get_supported_languages"),
        (
            "p",
            "any sonarcloud issues on PR #482?",
            "sonar/fetch_sonarcloud_issues|sonar/summarize_sonarcloud_issues",
        ),
        (
            "p",
            "give me a quick rundown of the critical problems sonar flagged on pull request 490",
            "sonar/summarize_sonarcloud_issues|sonar/fetch_sonarcloud_issues",
        ),
        # package versions / npm
        (
            "p",
            "are my requirements.txt pins stale? fastapi==0.95.0, pydantic==1.10.2, httpx==0.23.0",
            "pkgv/check_python_versions",
        ),
        ("p", "check the deps in my go.mod for newer releases", "pkgv/check_go_versions"),
        (
            "p",
            "which Claude model is the newest one on Bedrock?",
            "pkgv/get_latest_bedrock_model|pkgv/check_bedrock_models",
        ),
        ("p", "newest versions for the dependencies in my pom.xml", "pkgv/check_maven_versions"),
        ("p", "how heavy is date-fns once bundled?", "npm/npmSize"),
        ("p", "is the request package deprecated?", "npm/npmDeprecated"),
        ("p", "what could I use instead of moment?", "npm/npmAlternatives"),
        ("p", "does fastify ship its own TypeScript typings?", "npm/npmTypes"),
        ("p", "weekly downloads of zod over the last month", "npm/npmTrends"),
        (
            "p",
            "are the licenses of pg, knex and sharp compatible with each other?",
            "npm/npmLicenseCompatibility",
        ),
        ("p", "find a 24h pharmacy near Alexanderplatz", "brave/brave_local_search"),
        # Context7
        (
            "p",
            "pull current docs for Prisma relation queries, we're on v5",
            "c7/resolve-library-id",
            "c7/get-library-docs",
        ),
        ("p", "context7 docs for /vercel/next.js on middleware matchers", "c7/get-library-docs"),
        # Datadog
        ("p", "which datadog monitors are alerting right now?", "dd/get-monitors"),
        ("p", "show me the widgets on datadog dashboard abc-123-xyz", "dd/get-dashboard"),
        ("p", "count error logs by service over the last hour", "dd/aggregate-logs"),
        ("p", "what deploy events happened yesterday between 14:00 and 16:00 UTC?", "dd/get-events"),
        ("p", "what unit is trace.http.request.duration reported in?", "dd/get-metric-metadata"),
        # OSV / EOL
        ("p", "which versions fix CVE-2021-44228?", "osv/query_for_cve_fix_versions"),
        ("p", "what versions are hit by CVE-2022-22965?", "osv/query_for_cve_affected"),
        ("p", "is node 16 still getting security updates?", "eol/check_version|eol/get_all_details"),
        (
            "p",
            "~whats the upgrade path from django 3.2 and is it still supported",
            "eol/compare_versions|eol/check_version",
        ),
        # ambiguous
        (
            "a",
            "search the web for 'ECONNRESET node 20 undici keep-alive'",
            "brave/brave_web_search|tav/tavily_search|tav/tavily_qna_search|tav/tavily_get_search_context",
        ),
        (
            "a",
            "google how other teams handle stripe webhook retries",
            "brave/brave_web_search|tav/tavily_search|tav/tavily_qna_search|tav/tavily_get_search_context",
        ),
        (
            "a",
            "what's the latest version of express and react?",
            "pkgv/check_npm_versions|npm/npmLatest|npm/npmVersions",
        ),
        ("a", "any known vulnerabilities in lodash 4.17.20?", "osv/query_package_cve|npm/npmVulnerabilities"),
        ("a", "any CVEs for nginx 1.18?", "osv/query_package_cve|eol/check_cve"),
        ("a", "list our projects", "lin/list_projects|jira/list_projects"),
        (
            "a",
            "find tickets that mention 'idempotency key'",
            "lin/search_issues|jira/execute_jql|jira/get_only_ticket_name_and_description",
        ),
        (
            "a",
            "what tickets are assigned to me right now?",
            "lin/list_issues|jira/execute_jql|jira/get_only_ticket_name_and_description",
        ),
        ("a", "show me the README of the zod package", "npm/npmPackageReadme|ghr/get-file-content"),
        (
            "a",
            "change the description of ticket OPS-12 to 'blocked by the bank API outage'",
            "lin/update_issue|jira/edit_ticket",
        ),
        # unanswerable, everyday
        ("u", "book a table for four at an italian place friday 8pm", "e"),
        ("u", "order me a large pepperoni pizza", "e"),
        ("u", "play some lo-fi beats", "e"),
        ("u", "set an alarm for 6:30 tomorrow", "e"),
        ("u", "transfer $200 to my landlord", "e"),
        ("u", "turn the living room lights off", "e"),
        ("u", "get me an uber to the office", "e"),
        ("u", "text my sister that I'll be late", "e"),
        # unanswerable, near-domain
        ("u", "what's the value stored under redis key session:42?", "n"),
        ("u", "flush the whole redis cache", "n"),
        ("u", "push my commits to origin", "n"),
        ("u", "pull the latest changes from upstream main", "n"),
        ("u", "merge PR #482 on GitHub", "n"),
        ("u", "stop and remove the postgres-dev container", "n"),
        ("u", "create a datadog monitor that fires when p99 latency goes over 500ms", "n"),
        ("u", "assign PAY-77 to Marco in Jira", "n"),
    ],
}

PRODUCT_MANAGER: dict[str, Any] = {
    "who": "Jonas, a product manager: Gmail and Google Calendar for himself, Outlook for the company calendar, "
    "Notion, Outline and Confluence docs, Todoist and a Trello board, Teams, Zoom transcripts and a meeting bot, "
    "Miro, Clockify, Office files, Google Sheets, feature flags and product analytics.",
    "servers": {
        "notion": (MSC, "Notion ReadOnly MCP Server"),
        "outline": (MSC, "MCP Outline Server"),
        "conf": (MSC, "Confluence Communication Server MCP Server"),
        "gws": (MSC, "Google Workspace MCP Server"),
        "olk": (MSC, "Outlook Meetings Scheduler MCP Server"),
        "todo": (MSC, "Todoist MCP Server Extended"),
        "trello": (MSC, "MCP Server Trello"),
        "teams": (MSC, "MCP Teams Server"),
        "zoom": (MSC, "Zoom Transcript MCP Server"),
        "att": (MSC, "Attendee MCP Server"),
        "miro": (MSC, "Miro MCP"),
        "clock": (MSC, "Clockify MCP Server"),
        "ppt": (MSC, "powerpoint MCP server"),
        "word": (LIV, "Office-Word-MCP-Server"),
        "sheets": (MSC, "MCP Google Sheets Server"),
        "gb": (MSC, "GrowthBook MCP Server"),
        "ph": (MSC, "PostHog MCP Server"),
        "time": (GW, "time"),
    },
    "queries": [
        # Notion (read only)
        (
            "p",
            "pull the Notion page 1f2e3d4c5b6a and give me the gist",
            "notion/API-retrieve-a-page|notion/API-get-one-pager",
        ),
        ("p", "any comments on Notion block 9a8b7c6d?", "notion/API-retrieve-a-comment"),
        (
            "p",
            "grab the whole Q3 Planning page from Notion with its databases and comments, id 7c1e22aa",
            "notion/API-get-one-pager",
        ),
        (
            "p",
            "what fields does our Notion roadmap database a1b2c3d4 have?",
            "notion/API-retrieve-a-database",
        ),
        ("p", "list what's nested under Notion block 55aa66bb", "notion/API-get-block-children"),
        (
            "p",
            "the big Notion export I kicked off for page 7c1e22aa, is the result ready?",
            "notion/API-get-background-result",
        ),
        # Outline
        ("p", "export the Onboarding collection from Outline as markdown", "outline/export_collection"),
        ("p", "ask our Outline wiki what the parental leave policy is", "outline/ask_ai_about_documents"),
        ("p", "new Outline collection 'Pricing Research', make it green", "outline/create_collection"),
        (
            "p",
            "what's sitting in the Outline trash? I think someone binned the API guidelines doc",
            "outline/list_trash",
        ),
        ("p", "comment on outline doc 3f9k: 'Can we add the EU numbers here?'", "outline/add_comment"),
        ("p", "who left feedback on outline doc 3f9k?", "outline/list_document_comments"),
        ("p", "rename the Outline collection 'Misc' to 'Archive 2023'", "outline/update_collection"),
        # Confluence
        ("p", "run the CQL space = PROD and title ~ 'release notes', max 10", "conf/execute_cql_search"),
        ("p", "show me confluence page 884122", "conf/get_page_content"),
        # Gmail (Google Workspace)
        (
            "p",
            "email anna@northwind.io, subject 'Beta feedback', saying we ship v2 on the 14th",
            "gws/send_email",
        ),
        (
            "p",
            "hey did Sarah ever get back to me about the invoice? check my mail",
            "gws/search_emails|gws/list_emails",
        ),
        ("p", "archive email 18c2f7a9e", "gws/modify_email"),
        ("p", "show my 10 newest unread emails", "gws/list_emails|gws/search_emails"),
        ("p", "find emails with PDF attachments from legal@acme.com since March", "gws/search_emails"),
        # Google Calendar
        ("p", "what's on my Google Calendar tomorrow?", "gws/list_events"),
        ("p", "put 'Dentist' in my google calendar thursday 9 to 10am", "gws/create_event"),
        # Outlook
        ("p", "what's Tomás Ortega's work email? need it for an invite", "olk/find-person"),
        (
            "p",
            "add jordan@acme.com to Outlook event AAMkAGI2 as an attendee",
            "olk/update-event-attendees|olk/update-event",
        ),
        (
            "p",
            "set up an Outlook meeting 'Pricing sync' with Lee and Priya next Tuesday 3pm Europe/Berlin",
            "olk/create-event-with-attendees",
        ),
        ("p", "details of outlook event AAMkADk2 please", "olk/get-event"),
        ("p", "any Outlook meetings with 'retro' in the title this month?", "olk/list-events"),
        # Todoist
        ("p", "tick off 'send deck to legal' in Todoist", "todo/todoist_complete_task"),
        ("p", "what sections does my Todoist project Launch have?", "todo/todoist_get_project_sections"),
        (
            "p",
            "rename my Todoist label 'waiting' to 'blocked' and make it red",
            "todo/todoist_update_personal_label",
        ),
        ("p", "~show the shared lables in todoist", "todo/todoist_get_shared_labels"),
        ("p", "delete todoist label 2156", "todo/todoist_delete_personal_label"),
        # Trello
        (
            "p",
            "add a card 'Interview 3 churned customers' to Trello list 64ab12, due next Friday",
            "trello/add_card_to_list",
        ),
        ("p", "what's been happening on the Trello board lately?", "trello/get_recent_activity"),
        ("p", "show me all the columns on our trello board", "trello/get_lists"),
        ("p", "add a 'Blocked' list to the board", "trello/add_list_to_board"),
        ("p", "archive the whole 'Done Q2' list on trello", "trello/archive_list"),
        ("p", "which cards are in trello list 64ab12?", "trello/get_cards_by_list_id"),
        # Teams
        ("p", "start a Teams thread 'Release 4.2 go/no-go' and mention Priya", "teams/start_thread"),
        ("p", "what did people reply in Teams thread 19:abc123?", "teams/read_thread"),
        ("p", "~who is in our Teams grup?", "teams/list_members"),
        ("p", "add 'pushing to Thursday' to teams thread 19:abc123 and tag Marco", "teams/update_thread"),
        ("p", "latest threads in our teams channel", "teams/list_threads"),
        # Zoom transcripts
        ("p", "what did Lee commit to in zoom meeting 86213?", "zoom/extract_action_items"),
        ("p", "search my zoom transcripts from last week for 'pricing tiers'", "zoom/search_transcripts"),
        ("p", "which zoom meetings in March have cloud recordings?", "zoom/list_meetings"),
        ("p", "~dowload the transcript for zoom meeting 86213", "zoom/download_transcript"),
        ("p", "which zoom transcripts do I already have on disk for May?", "zoom/check_local_transcripts"),
        # Attendee meeting bot
        ("p", "send a notetaker bot into https://meet.google.com/abc-defg-hij", "att/create_meeting_bot"),
        ("p", "is bot_8Fz still in the call?", "att/get_bot_status"),
        ("p", "have the bot say 'recording starts now' out loud in the meeting", "att/make_bot_speak"),
        ("p", "kick the recording bot bot_8Fz out of the meeting", "att/remove_meeting_bot"),
        (
            "p",
            "post 'slides: https://bit.ly/q3deck' in the meeting chat through the bot",
            "att/send_chat_message",
        ),
        # Miro
        ("p", "list the mind map nodes on Miro board uXjVO9k=", "miro/get-mindmap-nodes"),
        (
            "p",
            "bulk-create the sticky notes from stickies.json on miro board uXjVO9k=",
            "miro/create-items-in-bulk-using-file",
        ),
        ("p", "what arrows connect things on miro board uXjVO9k=?", "miro/get-connectors"),
        # Clockify
        ("p", "how many hours did I log last week?", "clock/getTimeEntries|clock/getSummaryReport"),
        (
            "p",
            "log 10:00-12:00 today on the Onboarding Revamp project: 'user interviews'",
            "clock/addTimeEntry",
        ),
        ("p", "~hours by person and project for june", "clock/getSummaryReport"),
        ("p", "what did Jonas W. track this week?", "clock/getUserTimeEntriesByName"),
        # PowerPoint / Word
        ("p", "make a new deck called q3-review", "ppt/create-presentation"),
        ("p", "add a comparison slide 'Build vs Buy' to q3-review", "ppt/add-slide-comparison"),
        (
            "p",
            "put a slide with a bar chart of signups per month in q3-review: Apr 120, May 180, Jun 260",
            "ppt/add-slide-title-with-chart",
        ),
        ("p", "turn prd-search.docx into a PDF", "word/convert_to_pdf"),
        ("p", "replace every 'Q3' with 'Q4' in roadmap.docx", "word/search_and_replace"),
        ("p", "what's the heading structure of prd-search.docx?", "word/get_document_outline"),
        ("p", "lock board-memo.docx with a password", "word/protect_document"),
        # Google Sheets
        (
            "p",
            "read A1:F40 of spreadsheet 1BxiMVs0XRA5nFMd",
            "sheets/sheets_get_values|sheets/sheets_batch_get_values",
        ),
        ("p", "clear Backlog!B2:B100 in the planning sheet", "sheets/sheets_clear_values"),
        ("p", "what tabs does spreadsheet 1BxiMVs0XRA5nFMd have?", "sheets/sheets_get_metadata"),
        # GrowthBook / PostHog
        ("p", "create a boolean flag new-onboarding defaulting to false", "gb/create_feature_flag"),
        ("p", "~which feature flgas do we have?", "gb/get_feature_flags"),
        ("p", "which safe rollouts are finished?", "gb/get_stale_safe_rollouts"),
        (
            "p",
            "add a posthog annotation 'Pricing page v2 launched' on project 4821 for today",
            "ph/create_posthog_annotation",
        ),
        # time
        ("p", "it's 4pm in San Francisco, what time is that in Berlin?", "time/convert_time"),
        ("p", "what time is it in Singapore right now?", "time/get_current_time"),
        # ambiguous
        ("a", "what's on my calendar tomorrow?", "gws/list_events|olk/list-events"),
        (
            "a",
            "schedule a 30 min 1:1 with Priya on Thursday at 2pm",
            "gws/create_event|olk/create-event-with-attendees|olk/create-event",
        ),
        ("a", "cancel the Vendor demo meeting on Friday", "gws/delete_event|olk/delete-event"),
        ("a", "push the roadmap review to 4pm", "gws/update_event|olk/update-event"),
        (
            "a",
            "add Marco to tomorrow's sprint review",
            "gws/update_event|olk/update-event-attendees|olk/update-event",
        ),
        (
            "a",
            "get me the transcript of this morning's design review",
            "zoom/get_recent_transcripts|zoom/download_transcript|att/get_meeting_transcript",
        ),
        (
            "a",
            "search the wiki for our expense policy",
            "outline/ask_ai_about_documents|conf/execute_cql_search",
        ),
        (
            "a",
            "change the due date of 'Q3 roadmap review' to Friday",
            "todo/todoist_update_task|trello/update_card_details",
        ),
        ("a", "get rid of the 'update pricing page' task", "todo/todoist_delete_task|trello/archive_card"),
        (
            "a",
            "rename my task 'draft PRD' to 'draft PRD v2'",
            "todo/todoist_update_task|trello/update_card_details",
        ),
        # unanswerable, everyday
        ("u", "book me a flight to Lisbon for the offsite", "e"),
        ("u", "order lunch for the team from Sweetgreen", "e"),
        ("u", "set a timer for 25 minutes", "e"),
        ("u", "call my manager", "e"),
        ("u", "play my focus playlist", "e"),
        ("u", "translate 'thank you for your patience' into Japanese", "e"),
        ("u", "what's the weather going to be like this weekend?", "e"),
        ("u", "book a haircut for Saturday morning", "e"),
        # unanswerable, near-domain
        ("u", "edit the Notion page 1f2e3d4c5b6a and add our new OKRs to it", "n"),
        ("u", "create a new Todoist task 'prep board slides' due Monday", "n"),
        ("u", "set up a Gmail filter so newsletters skip my inbox", "n"),
        ("u", "turn on the new-onboarding flag in production", "n"),
        ("u", "duplicate the Miro board uXjVO9k= for next week's workshop", "n"),
        ("u", "invite lee@acme.com to our Trello board", "n"),
        ("u", "what's our conversion rate this week in PostHog?", "n"),
        ("u", "approve Jonas's timesheet for last week in Clockify", "n"),
    ],
}

DATA_PLATFORM: dict[str, Any] = {
    "who": "Marco, a data platform / SRE engineer: ClickHouse and StarRocks warehouses, Elasticsearch, dbt, "
    "Kafka on Confluent, AWS and GCP, Argo CD, two secret managers (Doppler and Infisical), Zabbix, Datadog and "
    "Logfire, Excel reports, a chart maker and a few whitelisted shell commands.",
    "servers": {
        "ch": (MSC, "ClickHouse MCP Server"),
        "sr": (MSC, "StarRocks Official MCP Server"),
        "es": (MSC, "Elasticsearch MCP Server"),
        "dbt": (MSC, "dbt MCP Server"),
        "kafka": (MSC, "mcp-confluent"),
        "aws": (MSC, "AWS MCP Server"),
        "s3": (MSC, "S3 MCP Server"),
        "awssec": (MSC, "AWS Security MCP"),
        "gcp": (MSC, "GCP MCP"),
        "argo": (MSC, "Argo CD MCP Server"),
        "dop": (MSC, "Doppler MCP Server"),
        "inf": (MSC, "Infisical Model Context Protocol"),
        "zbx": (MSC, "Zabbix MCP Server"),
        "lf": (MSC, "Logfire MCP Server"),
        "dd": (MSC, "Datadog MCP Server"),
        "xl": (MSC, "Excel MCP Server musa"),
        "chart": (LIV, "MCP Server Chart"),
        "sh": (MSC, "shell-mcp"),
    },
    "queries": [
        # ClickHouse
        ("p", "tables in the clickhouse 'events' database that start with page_", "ch/list_tables"),
        (
            "p",
            "in clickhouse: select toDate(ts) d, count() from events.page_views group by d order by d desc limit 7",
            "ch/run_select_query",
        ),
        ("p", "which databases are on the clickhouse cluster?", "ch/list_databases"),
        # StarRocks
        ("p", "overview of every table in the starrocks sales db, with row counts", "sr/db_overview"),
        ("p", "sample rows and row count for starrocks table sales.orders", "sr/table_overview"),
        ("p", "in StarRocks run ALTER TABLE sales.orders ADD COLUMN coupon VARCHAR(32)", "sr/write_query"),
        ("p", "plot daily revenue from starrocks as a plotly line chart", "sr/query_and_plotly_chart"),
        # Elasticsearch
        ("p", "what elasticsearch indices match logs-2024.*?", "es/list_indices"),
        ("p", "find docs in the orders index where status is failed, last hour only", "es/search"),
        ("p", "reindex logs-old into logs-v2 but only the level:error docs", "es/reindex"),
        ("p", "create an index customers-v3 with 2 shards and a keyword mapping on email", "es/create_index"),
        ("p", "show me the elasticsearch template logs-template", "es/get_index_template"),
        ("p", "bulk load these 500 product docs into the products index, use sku as the id", "es/bulk"),
        ("p", "add a date field shipped_at to the mapping of the orders index", "es/create_mapping"),
        # dbt
        ("p", "~which dbt modles are marts?", "dbt/get_mart_models"),
        ("p", "compiled SQL and columns for dbt model fct_orders", "dbt/get_model_details"),
        ("p", "what metrics are defined in our semantic layer?", "dbt/list_metrics"),
        ("p", "monthly revenue for 2024 from the semantic layer, grouped by region", "dbt/query_metrics"),
        ("p", "what can I slice the active_users metric by?", "dbt/get_dimensions"),
        ("p", "~compile the dbt project so I can see the genrated sql", "dbt/compile"),
        # Kafka / Confluent
        ("p", "~list the kafak topics", "kafka/list-topics"),
        (
            "p",
            'send {"order_id": 991, "status": "shipped"} to the order-events topic',
            "kafka/produce-message",
        ),
        ("p", "set retention.ms=604800000 on topic clickstream", "kafka/alter-topic-config"),
        ("p", "delete the s3-sink-legacy connector", "kafka/delete-connector"),
        ("p", "what flink statements exist in environment env-x7k2?", "kafka/list-flink-statements"),
        # AWS (S3 delete, DynamoDB)
        ("p", "delete s3://acme-exports/tmp/old-dump.csv", "aws/s3_object_delete"),
        (
            "p",
            "put item {pk: 'user#42', plan: 'pro'} into dynamodb table users",
            "aws/dynamodb_item_put|aws/dynamodb_item_batch_write",
        ),
        ("p", "turn on TTL for the sessions table using expires_at", "aws/dynamodb_update_ttl"),
        ("p", "remove the item with pk 'user#42' from the users table in dynamo", "aws/dynamodb_item_delete"),
        ("p", "run these 3 PartiQL updates against dynamodb in one go", "aws/dynamodb_batch_execute"),
        # S3 (read)
        ("p", "what S3 buckets do we have?", "s3/list-buckets"),
        ("p", "list the files under s3://acme-exports/2024/06/", "s3/list-objects"),
        ("p", "download reports/q2.csv from the acme-exports bucket", "s3/get-object"),
        # AWS security
        ("p", "which security groups have port 22 open?", "awssec/find_security_groups_by_port"),
        ("p", "what's the bucket policy on acme-exports?", "awssec/get_s3_bucket_policy"),
        ("p", "audit IAM user deploy-bot: access keys, MFA, console login", "awssec/get_user_security_audit"),
        ("p", "which roles can the ci-runner role assume?", "awssec/find_roles_by_trust_relationship"),
        ("p", "list the running EC2 instances", "awssec/list_ec2_resources"),
        # GCP
        ("p", "how much is GCP project analytics-prod costing us?", "gcp/get-billing-info"),
        ("p", "forecast spend for analytics-prod over the next 3 months", "gcp/get-cost-forecast"),
        ("p", "list GKE clusters in europe-west1", "gcp/list-gke-clusters"),
        ("p", "switch to gcp project analytics-staging", "gcp/select-project"),
        ("p", "what budgets are set on analytics-prod?", "gcp/get-billing-budget"),
        # Argo CD
        ("p", "is the checkout app synced and healthy in argo?", "argo/get_application"),
        ("p", "show me the resource tree for payments-api", "argo/get_application_resource_tree"),
        ("p", "restart the payments-api deployment through argo", "argo/run_resource_action"),
        ("p", "delete the preview-pr-311 argo app", "argo/delete_application"),
        ("p", "which argo apps have billing in the name?", "argo/list_applications"),
        # Doppler / Infisical
        ("p", "list the secret names in doppler project api, config dev", "dop/doppler_list_secrets"),
        ("p", "show the doppler activity log for the api project", "dop/doppler_get_activity_logs"),
        ("p", "make a read-only doppler service token for api/prd", "dop/doppler_create_service_token"),
        ("p", "create a staging environment in infisical project 6f2a", "inf/create-environment"),
        (
            "p",
            "invite dana@acme.io to infisical project 6f2a as a developer",
            "inf/invite-members-to-project",
        ),
        ("p", "make a /payments folder in the infisical prod environment", "inf/create-folder"),
        # Zabbix
        ("p", "list the zabbix hosts in group db-servers", "zbx/host_get"),
        ("p", "add host db-07 at 10.0.4.17 to zabbix under Linux servers", "zbx/host_create"),
        ("p", "disable monitoring for zabbix host 10542", "zbx/host_update"),
        ("p", "create a zabbix host group kafka-brokers", "zbx/hostgroup_create"),
        # Logfire
        ("p", "recent exceptions thrown from app/workers/ingest.py", "lf/find_exceptions_in_file"),
        ("p", "what columns does the logfire records table have?", "lf/get_logfire_records_schema"),
        # Datadog
        ("p", "show me datadog monitor 12345678", "dd/get-monitor"),
        ("p", "list the datadog dashboards", "dd/get-dashboards"),
        ("p", "find datadog metrics matching kafka.consumer.*", "dd/get-metrics"),
        # Excel
        ("p", "create a workbook at ~/reports/capacity.xlsx", "xl/create_workbook"),
        ("p", "put =SUM(B2:B31) into B32 on the June sheet of capacity.xlsx", "xl/apply_formula"),
        ("p", "read A1:D50 from Sheet1 of ~/reports/oncall.xlsx", "xl/read_data_from_excel"),
        ("p", "make the header row of capacity.xlsx bold with a grey fill", "xl/format_range"),
        # charts
        ("p", "pie chart of storage by team: data 40, ml 25, web 20, other 15", "chart/generate_pie_chart"),
        (
            "p",
            "draw a sankey of events flowing ingest -> kafka -> clickhouse and elasticsearch",
            "chart/generate_sankey_chart",
        ),
        ("p", "fishbone diagram of the causes of last night's outage", "chart/generate_fishbone_diagram"),
        (
            "p",
            "histogram of these query latencies in ms: 120, 340, 95, 410, 88, 230, 1200",
            "chart/generate_histogram_chart",
        ),
        # shell
        ("p", "~how much disk is free on this bxo?", "sh/shell_df"),
        ("p", "nslookup kafka.internal.acme.io", "sh/shell_nslookup"),
        ("p", "~whois for acme-data.io, when does the domian expire?", "sh/shell_whois"),
        ("p", "how much memory is free on the host?", "sh/shell_free"),
        # ambiguous
        (
            "a",
            "run this SQL: select count(*) from orders where dt = today()",
            "ch/run_select_query|sr/read_query",
        ),
        (
            "a",
            "how many page views did we have yesterday? query the warehouse",
            "ch/run_select_query|sr/read_query",
        ),
        ("a", "list all the tables in the analytics database", "ch/list_tables|sr/db_overview"),
        ("a", "get the SENTRY_DSN secret for prod", "dop/doppler_get_secret|inf/get-secret"),
        (
            "a",
            "set FEATURE_X=true in the staging secrets",
            "dop/doppler_set_secret|inf/update-secret|inf/create-secret",
        ),
        ("a", "delete the OLD_TOKEN secret from dev", "dop/doppler_delete_secrets|inf/delete-secret"),
        (
            "a",
            "pull yesterday's error logs for the checkout service",
            "dd/aggregate-logs|gcp/get-logs|lf/arbitrary_query|es/search",
        ),
        (
            "a",
            "what were the most frequent errors in the last 24 hours?",
            "dd/aggregate-logs|lf/find_exceptions|lf/arbitrary_query|gcp/get-logs|es/search",
        ),
        ("a", "which hosts are down right now?", "zbx/host_get|dd/get-monitors"),
        ("a", "which projects have we got?", "gcp/list-projects|dop/doppler_list_projects"),
        # unanswerable, everyday
        ("u", "book the big meeting room for 3pm", "e"),
        ("u", "order more coffee beans for the office", "e"),
        ("u", "call the on-call engineer", "e"),
        ("u", "play some rain sounds", "e"),
        ("u", "remind me to stretch every hour", "e"),
        ("u", "buy a birthday gift for Ana", "e"),
        ("u", "book a train to Milan for Thursday", "e"),
        ("u", "what's a good name for our new data team?", "e"),
        # unanswerable, near-domain
        ("u", "create a datadog monitor for consumer lag above 10k", "n"),
        ("u", "create a new ClickHouse table events_v2 like events", "n"),
        ("u", "drop the elasticsearch index logs-2023.01", "n"),
        ("u", "acknowledge the zabbix problem on db-03", "n"),
        ("u", "upload backup.tar.gz to s3://acme-backups", "n"),
        ("u", "run dbt build for the marts", "n"),
        ("u", "rotate the access keys of IAM user deploy-bot", "n"),
    ],
}

SHOP_OWNER: dict[str, Any] = {
    "who": "Dana, who runs a small candle brand: a Shopify web shop and Square at weekend markets, Mailmodo "
    "newsletters, social media (Metricool, X, LinkedIn), SEO tools, a WordPress blog, Xero books, lead finding, "
    "image tools, WhatsApp for customers, an inventory Google Sheet and e-signatures for wholesale contracts.",
    "servers": {
        "shop": (MSC, "Shopify MCP Server"),
        "sq": (MSC, "Square Model Context Protocol Server (Beta)"),
        "mm": (MSC, "mailmodo"),
        "metri": (MSC, "Metricool MCP Server"),
        "x": (MSC, "X (Twitter) MCP server"),
        "ligo": (MSC, "LiGo + LinkedIn MCP Runner"),
        "dub": (MSC, "Dub.co MCP Server"),
        "d4s": (MSC, "DataForSEO MCP Server"),
        "fserp": (MSC, "FetchSERP MCP Server"),
        "wp": (MSC, "WordPress MCP"),
        "xero": (MSC, "Xero MCP Server"),
        "hunter": (MSC, "Hunter MCP Server"),
        "stab": (MSC, "Stability AI MCP Server"),
        "poll": (MSC, "MCPollinations Multimodal MCP Server"),
        "wa": (MSC, "WhatsApp MCP Server"),
        "aud": (MSC, "Audiense Insights MCP Server"),
        "sheets": (MSC, "MCP Google Sheets Server"),
        "bold": (MSC, "BoldSign MCP Server"),
    },
    "queries": [
        # Shopify
        ("p", "find the Lavender Fields candle in my Shopify store", "shop/get-products"),
        ("p", "tag shopify customer 7283 as wholesale", "shop/tag-customer"),
        ("p", "raise the price of shopify product 8812 to $34 on every variant", "shop/update-product-price"),
        (
            "p",
            "what's in the Autumn collection on the website? it's collection 4410",
            "shop/get-products-by-collection",
        ),
        (
            "p",
            "subscribe https://hooks.dana-candles.com/orders to shopify order updates",
            "shop/manage-webhook",
        ),
        ("p", "show me shopify variants 4401 and 4402", "shop/get-variants-by-ids"),
        ("p", "pull shopify products 8812, 8813 and 8820", "shop/get-products-by-ids"),
        # Square
        ("p", "which Square API methods are there for inventory?", "sq/get_service_info"),
        ("p", "pull yesterday's Square payments from the market stall", "sq/make_api_request"),
        ("p", "what fields does Square's CreatePayment call expect?", "sq/get_type_info"),
        # Mailmodo
        ("p", "add jo@example.com to the VIP list in mailmodo", "mm/addContactToList"),
        ("p", "pete@example.org asked to stop getting our emails, unsubscribe him", "mm/unsubscribeContact"),
        ("p", "open and click numbers for campaign 7f21 in June", "mm/MailmodoCampainReportTool"),
        ("p", "trigger the welcome campaign c-2231 for new@buyer.com", "mm/sendEmailToCampaign"),
        ("p", "log an abandoned_cart event for lee@example.com with cart_value 58", "mm/sendEvent"),
        ("p", "bulk add the 30 market sign-ups to the Newsletter list", "mm/addBulkContactToList"),
        # Metricool
        ("p", "how did my Instagram reels do in May?", "metri/get_Instagram_Reels"),
        ("p", "tiktok video stats for the last 2 weeks", "metri/get_Tiktok_Videos"),
        ("p", "instagram stories numbers from 1 to 7 June", "metri/get_Instagram_Stories"),
        ("p", "which brands are connected in metricool?", "metri/get_brands"),
        ("p", "how did my facebook posts perform last month?", "metri/get_Facebook_Posts"),
        ("p", "schedule the photo post for instagram tomorrow at 6pm", "metri/post_Schedule_Post"),
        # X
        ("p", "~whats on my twiter timeline?", "x/get_timeline"),
        ("p", "who follows @candlecraftco?", "x/get_user_by_screen_name", "x/get_user_followers"),
        ("p", "look up @yankeecandle's profile on X", "x/get_user_by_screen_name|x/get_user_profile"),
        # LinkedIn (LiGo)
        ("p", "turn this blog post into three linkedin post options", "ligo/generate_linkedin_post"),
        ("p", "how did my last 10 linkedin posts perform?", "ligo/get_linkedin_posts"),
        (
            "p",
            "post on LinkedIn right now: 'We're hiring a part-time studio assistant!'",
            "ligo/publish_linkedin_post",
        ),
        ("p", "what does my linkedin headline say at the moment?", "ligo/get_linkedin_profile"),
        # Dub
        (
            "p",
            "shorten https://dana-candles.com/collections/autumn to dub.sh/autumn",
            "dub/create_link|dub/upsert_link",
        ),
        (
            "p",
            "point the short link 'sale' at the winter sale page instead",
            "dub/update_link|dub/upsert_link",
        ),
        ("p", "delete short link lnk_83jd", "dub/delete_link"),
        # SEO
        (
            "p",
            "which sites share backlinks with my competitor candlesbyjo.com?",
            "d4s/backlinks_competitors_tool",
        ),
        (
            "p",
            "new and lost referring domains for dana-candles.com over the last 30 days",
            "d4s/backlinks_bulk_new_lost_referring_domains_tool|d4s/backlinks_bulk_new_lost_backlinks_tool",
        ),
        (
            "p",
            "month by month backlink growth for dana-candles.com in 2024",
            "d4s/backlinks_timeseries_summary_tool",
        ),
        (
            "p",
            "what location codes can I use for google serp data in Canada?",
            "d4s/serp-organic-locations-list",
        ),
        (
            "p",
            "keyword ideas based on https://dana-candles.com/soy-candles for the UK",
            "fserp/get_keywords_suggestions",
        ),
        ("p", "raw HTML of the google results page for 'soy candles uk'", "fserp/get_serp_html"),
        # WordPress
        ("p", "draft a blog post titled 'How to trim a wick' with the text below", "wp/create-post"),
        ("p", "find my blog posts about beeswax", "wp/search-posts"),
        ("p", "open blog post 112", "wp/get-post"),
        ("p", "update blog post 112 with the new section about soot", "wp/update-post"),
        ("p", "which gutenberg block types can I use in posts?", "wp/wordpress-block-types-schema"),
        # Xero
        ("p", "invoice Greenleaf Stores (xero contact 9f2e) for 48 candles at $12", "xero/create-invoice"),
        ("p", "which xero invoices for Greenleaf are still unpaid?", "xero/list-invoices"),
        ("p", "make a quote in xero for the Hotel Rosa order, 200 votives at $3.50", "xero/create-quote"),
        ("p", "credit note to contact 9f2e for 5 broken jars at $12", "xero/create-credit-note"),
        ("p", "what tax rates are set up in the books?", "xero/list-tax-rates"),
        ("p", "update Greenleaf's email in xero to accounts@greenleaf.co", "xero/update-contact"),
        ("p", "~show me all the quotes I sent to Hotel Rosa", "xero/list-quotes"),
        # Hunter
        ("p", "is jess@boutiquehome.com a real address?", "hunter/email_verifier"),
        ("p", "find the email of Mark Doyle at freshhomegoods.com", "hunter/email_finder"),
        ("p", "what does boutiquehome.com do and where are they based?", "hunter/enrich_company"),
        ("p", "save sam@giftshop.co as a lead", "hunter/create_lead"),
        ("p", "tell me more about whoever is behind jess@boutiquehome.com", "hunter/enrich_email"),
        # Stability
        ("p", "upscale product-photo-14.png 4x", "stab/stability-ai-upscale-fast"),
        (
            "p",
            "in candle-3.png swap the mug in the background for a pine branch",
            "stab/stability-ai-search-and-replace",
        ),
        ("p", "~extend banner.png left and right so it fits a website header", "stab/stability-ai-outpaint"),
        (
            "p",
            "turn my pencil sketch label-sketch.png into a polished label illustration",
            "stab/stability-ai-control-sketch",
        ),
        # Pollinations
        (
            "p",
            "generate an image: cozy candle on a rainy windowsill, 1024x1024",
            "poll/generateImage|poll/generateImageUrl",
        ),
        ("p", "read this out in a warm voice as audio: 'Thanks for shopping small!'", "poll/respondAudio"),
        ("p", "which text-to-speech voices can I pick from?", "poll/listAudioVoices"),
        # WhatsApp
        ("p", "whatsapp +44 7700 900123: 'your order is ready for pickup'", "wa/send_message"),
        (
            "p",
            "create a whatsapp group 'Market helpers' with +447700900111 and +447700900222",
            "wa/create_group",
        ),
        ("p", "~show my recnet whatsapp chats", "wa/get_chats"),
        # Audiense
        ("p", "~list my audiense reprots", "aud/get-reports"),
        ("p", "summarize audiense report rpt_551", "aud/report-summary"),
        (
            "p",
            "what kind of content does my audience in report rpt_551 engage with?",
            "aud/get-audience-content",
        ),
        # Sheets
        ("p", "read the stock levels from Inventory!A2:C80 in sheet 1AbcInv", "sheets/sheets_get_values"),
        ("p", "set Inventory!C14 to 0, we sold out of Fig & Cedar", "sheets/sheets_update_values"),
        # BoldSign
        (
            "p",
            "who still hasn't signed the Greenleaf wholesale agreement?",
            "bold/list_documents|bold/get_document_properties",
        ),
        ("p", "nudge the signers of document 8c2d-11 again", "bold/send_reminder_for_document_sign"),
        ("p", "list my e-signature templates", "bold/list_templates"),
        # ambiguous
        ("a", "tweet 'Autumn collection drops Friday'", "x/post_tweet|ligo/publish_twitter_post"),
        (
            "a",
            "schedule a linkedin post for Monday 9am: 'Meet our new scents'",
            "ligo/schedule_linkedin_post|metri/post_Schedule_Post",
        ),
        (
            "a",
            "share our new arrivals on social media",
            "x/post_tweet|ligo/publish_linkedin_post|ligo/publish_twitter_post|metri/post_Schedule_Post",
        ),
        ("a", "who links to dana-candles.com?", "d4s/backlinks_backlinks_list_tool|fserp/get_backlinks"),
        (
            "a",
            "search volume for 'soy candles' and 'beeswax candles' in the US",
            "d4s/keywords-google-ads-search-volume|fserp/get_keywords_search_volume",
        ),
        (
            "a",
            "where do I rank on google for 'hand poured candles'?",
            "d4s/serp-organic-live-advanced|fserp/get_serp_results|fserp/get_serp_html",
        ),
        (
            "a",
            "find email addresses of people at giftshop.co",
            "hunter/domain_search|fserp/get_domain_emails",
        ),
        ("a", "how many customers do I have?", "shop/get-customers|sq/make_api_request"),
        ("a", "list my products", "shop/get-products|sq/make_api_request"),
        ("a", "find customer Jo Park's details", "shop/get-customers|sq/make_api_request"),
        # unanswerable, everyday
        ("u", "book a table for two on friday at 8", "e"),
        ("u", "call my accountant", "e"),
        ("u", "set an alarm for 5am, it's market day", "e"),
        ("u", "play some jazz in the shop", "e"),
        ("u", "get me an uber to the market", "e"),
        ("u", "turn up the heating in the studio", "e"),
        ("u", "pay the electricity bill", "e"),
        ("u", "book a van to pick up the wax delivery", "e"),
        # unanswerable, near-domain
        ("u", "refund order #1042 on Shopify", "n"),
        ("u", "delete the tweet I posted this morning", "n"),
        ("u", "call +44 7700 900123 on WhatsApp", "n"),
        ("u", "reply to the Instagram DM from @lumen_home", "n"),
        ("u", "delete blog post 112", "n"),
        ("u", "mark xero invoice INV-0042 as paid", "n"),
        ("u", "cancel the signature request for document 8c2d-11", "n"),
    ],
}

GRAD_STUDENT: dict[str, Any] = {
    "who": "Lena, a PhD student in computational biology who also TAs a course: two arXiv servers, Wikipedia, "
    "PubMed and trials (BioMCP), AlphaFold, two note stores (Basic Memory and an Obsidian vault), Readwise, Pocket, "
    "YouTube transcripts, a Python REPL and a calculator, two web search engines, document converters, mind maps "
    "and Moodle.",
    "servers": {
        "arx": (MSC, "ArXiv MCP Server"),
        "sarx": (LIV, "mcp-simple-arxiv"),
        "wiki": (LIV, "Wikipedia MCP Server"),
        "bio": (LIV, "BioMCP: Biomedical Model Context Protocol"),
        "af": (MSC, "AlphaFold MCP Server"),
        "bm": (LIV, "Basic Memory"),
        "obs": (MSC, "Obsidian MCP Server"),
        "rw": (MSC, "Readwise MCP"),
        "pocket": (MSC, "MCP Pocket"),
        "yt": (LIV, "YouTube Transcript Server"),
        "py": (MSC, "Python REPL MCP Server"),
        "calc": (LIV, "Calculator MCP Server"),
        "kagi": (MSC, "Kagi MCP server"),
        "ddg": (LIV, "duckduckgo-search MCP Server"),
        "pandoc": (MSC, "mcp-pandoc: A Document Conversion MCP Server"),
        "md2pdf": (MSC, "markdown2pdf-mcp"),
        "mind": (LIV, "Mindmap MCP Server"),
        "moodle": (MSC, "Moodle MCP Server"),
    },
    "queries": [
        # arXiv (download/read) and simple-arxiv (metadata, categories)
        ("p", "download arXiv paper 2310.06825 so we can go through it", "arx/download_paper"),
        ("p", "which papers have I already downloaded?", "arx/list_papers"),
        ("p", "read me the methods section of 2310.06825, it's downloaded already", "arx/read_paper"),
        ("p", "list the arXiv categories under cs", "sarx/list_categories"),
        ("p", "refresh the stored arxiv category taxonomy", "sarx/update_categories"),
        ("p", "what formats is 2402.03300 available in, and what's the abstract?", "sarx/get_paper_data"),
        # Wikipedia
        (
            "p",
            "short summary of the Wikipedia article on CRISPR gene editing",
            "wiki/get_summary|wiki/summarize_article_for_query",
        ),
        ("p", "what sections does the Wikipedia page 'Protein folding' have?", "wiki/get_sections"),
        ("p", "give me 5 key facts from Wikipedia's AlphaFold article", "wiki/extract_key_facts"),
        (
            "p",
            "topics related to the Michaelis-Menten kinetics article on wikipedia",
            "wiki/get_related_topics|wiki/get_links",
        ),
        (
            "p",
            "summarize only the History section of the wikipedia article on PCR",
            "wiki/summarize_article_section",
        ),
        (
            "p",
            "what does the wikipedia article on Western blot say about controls? just that part",
            "wiki/summarize_article_for_query|wiki/summarize_article_section",
        ),
        # BioMCP
        ("p", "PubMed articles on BRCA1 and PARP inhibitor resistance", "bio/article_searcher|bio/search"),
        ("p", "fetch PMID 34265844", "bio/article_getter|bio/fetch"),
        ("p", "recruiting clinical trials for glioblastoma in Germany", "bio/trial_searcher|bio/search"),
        ("p", "where are the study sites for NCT04280705?", "bio/trial_locations_getter"),
        ("p", "what were the outcome measures and results of NCT04280705?", "bio/trial_outcomes_getter"),
        (
            "p",
            "look up variant rs113488022 in myvariant",
            "bio/variant_getter|bio/variant_searcher|bio/fetch",
        ),
        (
            "p",
            "predict what chr7:140753336 A>T does to gene regulation with alphagenome",
            "bio/alphagenome_predictor",
        ),
        ("p", "papers published off the back of trial NCT02576509", "bio/trial_references_getter"),
        (
            "p",
            "what's the design and eligibility criteria of trial NCT05012345?",
            "bio/trial_protocol_getter|bio/trial_getter",
        ),
        (
            "p",
            "is BRAF V600E catalogued in the variant databases? what do they have on it",
            "bio/variant_searcher|bio/search",
        ),
        # AlphaFold
        ("p", "get the AlphaFold structure for P69905 as a PDB file", "af/get_structure"),
        (
            "p",
            "which regions of Q9Y6K9's predicted structure are low confidence?",
            "af/analyze_confidence_regions",
        ),
        ("p", "how much of the Arabidopsis thaliana proteome does AlphaFold cover?", "af/get_organism_stats"),
        ("p", "search AlphaFold for hemoglobin structures in human", "af/search_structures"),
        ("p", "download CIF files for P69905, P68871 and P02042", "af/batch_download"),
        (
            "p",
            "when was the AlphaFold prediction for P69905 made and with which model version?",
            "af/get_prediction_metadata",
        ),
        # Basic Memory
        (
            "p",
            "save a note 'Lab meeting 12 Mar' with: pilot worked, need more replicates, order antibodies",
            "bm/write_note",
        ),
        ("p", "append today's qPCR results to my 'Thesis ch3 outline' note", "bm/edit_note"),
        ("p", "make a canvas connecting kinase, ATP pocket and inhibitor", "bm/canvas"),
        ("p", "move my note 'old ideas' into the archive folder", "bm/move_note"),
        ("p", "switch basic memory over to the thesis project", "bm/switch_project"),
        ("p", "delete the note 'scratch 2'", "bm/delete_note"),
        ("p", "what did I change in basic memory over the last 3 days?", "bm/recent_activity"),
        ("p", "~is basic memory done syncing my files?", "bm/sync_status"),
        (
            "p",
            "which basic memory projects do I have, and which one is active?",
            "bm/list_memory_projects|bm/get_current_project",
        ),
        ("p", "pick up where we left off on memory://thesis/ch3-outline", "bm/build_context"),
        ("p", "find wikipedia articles about RNA interference, top 5", "wiki/search_wikipedia"),
        # Obsidian
        ("p", "show the folder structure of my Obsidian vault under Papers/", "obs/browse_vault_structure"),
        ("p", "open Papers/Jumper2021.md from my obsidian vault", "obs/get_note_content"),
        ("p", "obsidian notes tagged #to-read created since May", "obs/search_vault"),
        # Readwise / Pocket
        ("p", "find my Readwise highlights about attention heads", "rw/search_readwise_highlights"),
        ("p", "what did I highlight in The Selfish Gene?", "rw/search_readwise_highlights"),
        ("p", "what's unread in Pocket? give me 10", "pocket/pocket_get_articles"),
        ("p", "mark pocket item 3281932 as read", "pocket/pocket_mark_as_read"),
        # YouTube
        ("p", "transcript of https://www.youtube.com/watch?v=gjdhPJHnqzw", "yt/get_transcript"),
        ("p", "get the spanish subtitles of youtube video dQw4w9WgXcQ", "yt/get_transcript"),
        # Python
        (
            "p",
            "fit a linear regression on x=[1,2,3,4], y=[2.1,3.9,6.2,7.8] and give me slope and r^2",
            "py/execute_python",
        ),
        ("p", "pip install biopython into my python session", "py/install_package"),
        ("p", "what variables do I have defined in the python session?", "py/list_variables"),
        ("p", "~load results.csv with pandas and show the mean expresion per condition", "py/execute_python"),
        # converters, mind map
        ("p", "convert chapter3.md to docx at ~/thesis/chapter3.docx", "pandoc/convert-contents"),
        ("p", "turn this HTML export of my lab notebook into markdown", "pandoc/convert-contents"),
        (
            "p",
            "make an interactive mind map from this outline: # Thesis ## Ch1 Background ## Ch2 Methods",
            "mind/convert_markdown_to_mindmap",
        ),
        # Moodle
        ("p", "~whos enroled in the course?", "moodle/get_students"),
        ("p", "~list this courses assignmnets", "moodle/get_assignments"),
        ("p", "show the submissions for assignment 12", "moodle/get_submissions"),
        ("p", "what did student 3051 hand in for assignment 12?", "moodle/get_submission_content"),
        ("p", "what grade did student 3051 get on quiz 7?", "moodle/get_quiz_grade"),
        ("p", "~what quizes does the course have?", "moodle/get_quizzes"),
        # ambiguous
        (
            "a",
            "search arXiv for diffusion models for protein design since 2023",
            "arx/search_papers|sarx/search_papers",
        ),
        ("a", "find papers by John Jumper on arxiv", "arx/search_papers|sarx/search_papers"),
        ("a", "search the web for the ESM-3 release blog post", "kagi/search|ddg/duckduckgo_web_search"),
        ("a", "any recent news on AlphaFold 3 licensing?", "kagi/search|ddg/duckduckgo_web_search"),
        (
            "a",
            "who won the 2024 Nobel prize in chemistry?",
            "kagi/search|ddg/duckduckgo_web_search|wiki/search_wikipedia|wiki/get_article",
        ),
        ("a", "what's 17.3% of 2480?", "calc/calculate|py/execute_python"),
        ("a", "compute sqrt(2) * pi^3", "calc/calculate|py/execute_python"),
        ("a", "search my notes for western blot", "bm/search_notes|obs/search_vault"),
        ("a", "open my note 'Committee meeting prep'", "bm/read_note|bm/view_note|obs/get_note_content"),
        ("a", "convert report.md to PDF", "pandoc/convert-contents|md2pdf/markdown2pdf"),
        # unanswerable, everyday
        ("u", "order pad thai from the place near campus", "e"),
        ("u", "book the library study room for 2pm", "e"),
        ("u", "call my advisor", "e"),
        ("u", "set an alarm for 7am", "e"),
        ("u", "play lo-fi music while I write", "e"),
        ("u", "pay my tuition for next semester", "e"),
        ("u", "text my sister happy birthday", "e"),
        ("u", "turn off the lights in my room", "e"),
        # unanswerable, near-domain
        ("u", "enter a grade of 85 for student 3051 on assignment 12 in Moodle", "n"),
        ("u", "post an announcement to the Moodle course about Friday's lab", "n"),
        ("u", "save https://example.org/great-review to my Pocket", "n"),
        ("u", "add a new highlight to Readwise from this paragraph", "n"),
        ("u", "submit my preprint to arXiv", "n"),
        ("u", "which other Moodle courses am I teaching this term?", "n"),
        ("u", "enroll student 3051 in the course", "n"),
    ],
}

HOME_FINANCE: dict[str, Any] = {
    "who": "Sam, a Mac user who runs home life from Claude: YNAB budget, stocks, exchange rates and two crypto "
    "price feeds, Oura ring and Fitbit scale, Strava, SwitchBot smart home, travel (Airbnb, flights, maps, two "
    "weather sources), iMessage, iCloud calendar and contacts, Todoist and a local todo list, Bear notes.",
    "servers": {
        "ynab": (MSC, "YNAB MCP Server"),
        "yf": (LIV, "MCP Yahoo Finance"),
        "fx": (LIV, "Exchange Rate MCP Server"),
        "cs": (MSC, "CoinStats MCP Server"),
        "cc": (MSC, "Coincap MCP"),
        "oura": (MSC, "Oura MCP Server"),
        "fit": (MSC, "Fitbit MCP Connector for AI"),
        "strava": (MSC, "Strava MCP Server"),
        "sb": (MSC, "@genm/switchbot-mcp"),
        "bnb": (LIV, "Airbnb MCP Server"),
        "vf": (MSC, "Variflight MCP Server"),
        "wx": (LIV, "MCP Weather Free"),
        "wxm": (MSC, "WeatherXM PRO MCP Server"),
        "osm": (LIV, "OpenStreetMap (OSM) MCP Server"),
        "msg": (MSC, "Mac Messages MCP"),
        "dav": (MSC, "DAV MCP Server"),
        "td": (MSC, "Enhanced Todoist MCP Server Extended"),
        "tl": (MSC, "Todo List MCP Server"),
        "bear": (MSC, "Bear MCP Server"),
    },
    "queries": [
        # YNAB
        ("p", "how much is left in my Groceries category this month?", "ynab/list-categories"),
        ("p", "show every transaction from May 2025 across all accounts", "ynab/list-monthly-transactions"),
        ("p", "move $50 from Dining Out to Gifts for June", "ynab/move-budget-amount"),
        ("p", "merge the payees 'AMZN Mktp' and 'Amazon.com' into one called Amazon", "ynab/rename-payees"),
        (
            "p",
            "remind me which accounts I actually have set up in my budget, I keep forgetting",
            "ynab/list-accounts",
        ),
        ("p", "list my YNAB budgets", "ynab/list-budgets"),
        ("p", "last 20 transactions on my checking account since 1 June", "ynab/list-transactions"),
        ("p", "who have I been paying? list all the payees", "ynab/list-payees"),
        # stocks / fx
        ("p", "what's AAPL trading at?", "yf/get_current_stock_price"),
        ("p", "what did MSFT close at on 2024-03-15?", "yf/get_stock_price_by_date"),
        ("p", "~VTI divident history", "yf/get_dividends"),
        ("p", "when does NVDA report earnings next?", "yf/get_earning_dates"),
        ("p", "what do analysts say about TSLA, buy or sell?", "yf/get_recommendations"),
        (
            "p",
            "my dad keeps talking about Costco stock, has there been any news on it lately?",
            "yf/get_news",
        ),
        (
            "p",
            "how did VOO move between 2024-01-01 and 2024-06-30?",
            "yf/get_stock_price_date_range|yf/get_historical_stock_prices",
        ),
        ("p", "EUR to NOK rate today", "fx/exchange_rate"),
        ("p", "what was USD/JPY on 2024-01-02?", "fx/exchange_rate"),
        # crypto
        ("p", "ETH price chart over the last month", "cs/get-coin-chart-by-id"),
        ("p", "average bitcoin price on 1 Jan 2024", "cs/get-coin-avg-price"),
        ("p", "which exchanges list SOL and at what price?", "cs/get-ticker-markets"),
        ("p", "BTC/EUR price on Kraken at 2024-05-01 12:00", "cs/get-coin-exchange-price"),
        # health / fitness
        ("p", "what's my readiness score today?", "oura/get_today_readiness_data"),
        (
            "p",
            "hey, I feel wiped out, how is my resilience looking today according to the ring?",
            "oura/get_today_resilience_data",
        ),
        ("p", "readiness trend from June 1 to June 14", "oura/get_readiness_data"),
        ("p", "how has my weight changed over the last 30 days?", "fit/get_weight"),
        ("p", "show my fitbit profile", "fit/get_profile"),
        ("p", "my runs from last week on strava", "strava/get_user_activities"),
        ("p", "details of strava activity 11223344556", "strava/get_activity"),
        (
            "p",
            "segment efforts on Sunday's ride, activity 11223344556",
            "strava/get_activity_segments|strava/get_activity",
        ),
        # smart home
        ("p", "turn off the bedroom lamp", "sb/control_device"),
        ("p", "~what smart home devices do I hvae?", "sb/list_devices"),
        ("p", "~is the hallway humidifer on?", "sb/get_device_status"),
        # travel
        ("p", "airbnb in Porto for 2 adults, 12-15 Sept, under 120 a night", "bnb/airbnb_search"),
        ("p", "details of airbnb listing 53811202 for those dates", "bnb/airbnb_listing_details"),
        ("p", "flights from LHR to LIS on 2025-09-12", "vf/searchFlightsByDepArr|vf/searchFlightItineraries"),
        ("p", "where is aircraft G-EUPT right now?", "vf/getRealtimeLocationByAnum"),
        ("p", "cheapest fares London to Lisbon on 12 Sep", "vf/searchFlightItineraries"),
        ("p", "connections from MAN to FAO on 2025-09-12 with one change", "vf/getFlightTransferInfo"),
        (
            "p",
            "which LHR-LIS flight on the 12th is the most comfortable and punctual?",
            "vf/flightHappinessIndex",
        ),
        ("p", "weather stations within 5 km of 51.50, -0.12", "wxm/get_stations_near"),
        ("p", "latest reading from weather station wxm-88f1", "wxm/get_latest_observation"),
        ("p", "what did station wxm-88f1 record on 2024-07-04?", "wxm/get_historical_observations"),
        # maps
        ("p", "coordinates of 221B Baker Street, London", "osm/geocode_address"),
        ("p", "what's at 48.8584, 2.2945?", "osm/reverse_geocode"),
        ("p", "EV chargers within 2 km of 10 Elm Road, Leeds", "osm/find_ev_charging_stations"),
        ("p", "compare driving vs cycling to work from Clapham to Canary Wharf", "osm/analyze_commute"),
        (
            "p",
            "fair place to meet for friends coming from Camden, Brixton and Stratford",
            "osm/suggest_meeting_point",
        ),
        ("p", "~schools near 10 Elm Road Leeds, primary only", "osm/find_schools_nearby"),
        (
            "p",
            "we're driving to a concert at the O2 arena tonight, where can we park nearby?",
            "osm/find_parking_facilities",
        ),
        # messages, iCloud
        ("p", "text Mum 'landed safe, call you tonight'", "msg/tool_send_message"),
        ("p", "any messages from Jake in the last 3 hours?", "msg/tool_get_recent_messages"),
        ("p", "can you check what group chats I'm part of in Messages?", "msg/tool_get_chats"),
        ("p", "what's on my iCloud calendar next week?", "dav/get_calendar_events"),
        ("p", "list what's in my iCloud Drive Documents folder", "dav/list_my_files_and_folders"),
        ("p", "which address books do I have on fastmail?", "dav/get_my_contact_lists"),
        # tasks, notes
        (
            "p",
            "add 'renew passport' to Todoist for next Monday, priority 1",
            "td/todoist_create_task|td/todoist_quick_add_task",
        ),
        ("p", "reopen todoist task 7744120", "td/todoist_reopen_task"),
        ("p", "search my local todo list for things I added on 2025-06-03", "tl/search-todos-by-date"),
        ("p", "show todo #14 from the local list", "tl/get-todo"),
        ("p", "create a Bear note 'Garden plan' tagged #home", "bear/create_note"),
        ("p", "append 'tomatoes need staking' to my Bear note Garden plan", "bear/add_text"),
        ("p", "what tags do I use in Bear?", "bear/get_tags"),
        ("p", "~open my bear note wifi pasword", "bear/get_note"),
        # ambiguous
        (
            "a",
            "add 'buy milk' to my todo list",
            "td/todoist_create_task|td/todoist_quick_add_task|tl/create-todo",
        ),
        ("a", "what's still open on my to-do list?", "td/todoist_get_tasks|tl/list-active-todos"),
        ("a", "mark 'call plumber' as done", "td/todoist_complete_task|tl/complete-todo"),
        (
            "a",
            "how did I sleep last night?",
            "oura/get_today_sleep_data|oura/get_sleep_data|fit/get_sleep_by_date_range",
        ),
        ("a", "sleep data for 1-7 June", "oura/get_sleep_data|fit/get_sleep_by_date_range"),
        (
            "a",
            "what's bitcoin at right now?",
            "cs/get-coin-by-id|cs/get-coins|cc/bitcoin_price|cc/get_crypto_price",
        ),
        ("a", "price of solana", "cs/get-coin-by-id|cs/get-coins|cc/get_crypto_price|cc/list_assets"),
        (
            "a",
            "weather in Porto tomorrow",
            "wx/get_weather_by_city|wx/get_weather|wxm/search_cells_in_region|wxm/get_forecast_for_cell",
        ),
        (
            "a",
            "forecast for Lisbon airport on Friday",
            "vf/getFutureWeatherByAirport|wx/get_weather_by_city|wx/get_weather|wxm/get_forecast_for_cell",
        ),
        (
            "a",
            "what's Alex's phone number?",
            "msg/tool_find_contact|msg/tool_check_contacts|dav/get_contacts_from_list",
        ),
        # unanswerable, everyday
        ("u", "book us a table at the Thai place for saturday", "e"),
        ("u", "order a pepperoni pizza", "e"),
        ("u", "play my workout playlist", "e"),
        ("u", "book a dentist appointment for next week", "e"),
        ("u", "get me an uber to the airport", "e"),
        ("u", "set an alarm for 6:30", "e"),
        ("u", "pay my credit card bill", "e"),
        ("u", "what's a good name for a cat?", "e"),
        # unanswerable, near-domain
        ("u", "call Mom", "n"),
        ("u", "buy 0.1 BTC", "n"),
        ("u", "book airbnb listing 53811202 for 12-15 September", "n"),
        ("u", "book the 9:40 LHR-LIS flight on the 12th", "n"),
        ("u", "add a $45 grocery transaction to YNAB", "n"),
        ("u", "delete my Bear note 'old passwords'", "n"),
        ("u", "add 'Dinner with Ana' to my iCloud calendar on Saturday 7pm", "n"),
    ],
}

SETUPS: dict[str, dict[str, Any]] = {
    "backend-dev": BACKEND_DEV,
    "product-manager": PRODUCT_MANAGER,
    "data-platform": DATA_PLATFORM,
    "shop-owner": SHOP_OWNER,
    "grad-student": GRAD_STUDENT,
    "home-finance": HOME_FINANCE,
}
