--
-- PostgreSQL database dump
--

\restrict e0aVOh3TT8VMXToavOx5w3pfC5dlukPNrnhUQgVp98aWkPuaidPdbG2WnodMXlB

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: tessera_submission_readies_run(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.tessera_submission_readies_run() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE runs SET status = 'ready', updated_at = NEW.submitted_at
    WHERE id = NEW.run_id AND status = 'waiting';
    IF FOUND THEN
        PERFORM pg_notify('tessera_runs_ready', '');
    END IF;
    RETURN NULL;
END;
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: _sqlx_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public._sqlx_migrations (
    version bigint NOT NULL,
    description text NOT NULL,
    installed_on timestamp with time zone DEFAULT now() NOT NULL,
    success boolean NOT NULL,
    checksum bytea NOT NULL,
    execution_time bigint NOT NULL
);


--
-- Name: chat_bus; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_bus (
    seq bigint NOT NULL,
    origin text NOT NULL,
    session_id text NOT NULL,
    body text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: chat_bus_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.chat_bus ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.chat_bus_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: chat_confirmations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_confirmations (
    id text NOT NULL,
    session_id text NOT NULL,
    thread_id text NOT NULL,
    call_id text NOT NULL,
    operation text NOT NULL,
    arguments text NOT NULL,
    hash text NOT NULL,
    reasons text NOT NULL,
    preview text NOT NULL,
    status text NOT NULL,
    scope text,
    created_at bigint NOT NULL,
    decided_at bigint,
    consumed_at bigint,
    caller text DEFAULT 'model'::text NOT NULL,
    CONSTRAINT chat_confirmations_caller_check CHECK ((caller = ANY (ARRAY['model'::text, 'person'::text]))),
    CONSTRAINT chat_confirmations_scope_check CHECK ((scope = ANY (ARRAY['once'::text, 'operation'::text, 'session'::text]))),
    CONSTRAINT chat_confirmations_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'approved'::text, 'denied'::text, 'consumed'::text])))
);


--
-- Name: chat_executions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_executions (
    seq bigint NOT NULL,
    id text NOT NULL,
    session_id text NOT NULL,
    thread_id text NOT NULL,
    operation text NOT NULL,
    arguments text NOT NULL,
    hash text NOT NULL,
    role text NOT NULL,
    approval text NOT NULL,
    confirmation_id text,
    status text NOT NULL,
    items_total bigint NOT NULL,
    items_done bigint DEFAULT 0 NOT NULL,
    chunks_total bigint NOT NULL,
    chunks_done bigint DEFAULT 0 NOT NULL,
    item_ids text,
    result text,
    error text,
    created_at bigint NOT NULL,
    finished_at bigint,
    owner text,
    heartbeat_at bigint,
    stop_requested_at bigint,
    CONSTRAINT chat_executions_role_check CHECK ((role = ANY (ARRAY['read'::text, 'preview'::text, 'mutation'::text]))),
    CONSTRAINT chat_executions_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text, 'refused'::text, 'interrupted'::text])))
);


--
-- Name: chat_executions_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.chat_executions ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.chat_executions_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: chat_grants; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_grants (
    session_id text NOT NULL,
    operation text NOT NULL,
    confirmation_id text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: chat_messages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_messages (
    id bigint NOT NULL,
    session_id text NOT NULL,
    channel text NOT NULL,
    role text NOT NULL,
    thread_id text,
    body text NOT NULL,
    created_at bigint NOT NULL,
    CONSTRAINT chat_messages_channel_check CHECK ((channel = ANY (ARRAY['transcript'::text, 'model'::text])))
);


--
-- Name: chat_messages_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.chat_messages ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.chat_messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: chat_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_sessions (
    id text NOT NULL,
    scope text NOT NULL,
    model text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Name: chat_threads; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.chat_threads (
    id text NOT NULL,
    session_id text NOT NULL,
    intent text NOT NULL,
    slots text NOT NULL,
    status text NOT NULL,
    pending_question text,
    summary text NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    CONSTRAINT chat_threads_status_check CHECK ((status = ANY (ARRAY['waiting_for_user'::text, 'in_progress'::text, 'blocked'::text, 'workflow_proposed'::text, 'done'::text, 'failed'::text])))
);


--
-- Name: demo_items; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.demo_items (
    id text NOT NULL,
    title text NOT NULL,
    description text NOT NULL,
    status text NOT NULL,
    priority text NOT NULL,
    assignee text,
    due_date text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    completed_at bigint,
    CONSTRAINT demo_items_priority_check CHECK ((priority = ANY (ARRAY['low'::text, 'medium'::text, 'high'::text]))),
    CONSTRAINT demo_items_status_check CHECK ((status = ANY (ARRAY['open'::text, 'in_progress'::text, 'completed'::text])))
);


--
-- Name: generation_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.generation_events (
    id bigint NOT NULL,
    generation_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    payload text NOT NULL,
    created_at bigint NOT NULL
);


--
-- Name: generation_events_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.generation_events ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.generation_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: generations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.generations (
    id text NOT NULL,
    model text NOT NULL,
    provider text NOT NULL,
    prompt_hash text NOT NULL,
    outcome text NOT NULL,
    turns bigint NOT NULL,
    tokens_in bigint NOT NULL,
    tokens_out bigint NOT NULL,
    latency_ms bigint NOT NULL,
    cache_hit boolean NOT NULL,
    transcript text NOT NULL,
    tree text,
    created_at bigint NOT NULL,
    cache_lookup text,
    CONSTRAINT generations_outcome_check CHECK ((outcome = ANY (ARRAY['ok'::text, 'fell_back'::text, 'failed'::text])))
);


--
-- Name: page_cache; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.page_cache (
    key text NOT NULL,
    tree text NOT NULL,
    generation_id text NOT NULL,
    model text NOT NULL,
    hits bigint DEFAULT 0 NOT NULL,
    created_at bigint NOT NULL,
    last_hit_at bigint,
    provenance text DEFAULT '{}'::text NOT NULL
);


--
-- Name: pages; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.pages (
    id text NOT NULL,
    token_hash text NOT NULL,
    run_id text,
    generation_id text,
    status text NOT NULL,
    tree text NOT NULL,
    schema text,
    data text NOT NULL,
    response text,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    submitted_at bigint,
    component_set text,
    CONSTRAINT pages_status_check CHECK ((status = ANY (ARRAY['open'::text, 'submitted'::text, 'revoked'::text])))
);


--
-- Name: run_steps; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.run_steps (
    run_id text NOT NULL,
    step_index bigint NOT NULL,
    name text NOT NULL,
    status text NOT NULL,
    output text,
    error text,
    attempts bigint DEFAULT 0 NOT NULL,
    started_at bigint NOT NULL,
    finished_at bigint,
    input text,
    CONSTRAINT run_steps_status_check CHECK ((status = ANY (ARRAY['running'::text, 'succeeded'::text, 'failed'::text])))
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    id text NOT NULL,
    workflow text NOT NULL,
    status text NOT NULL,
    cursor bigint DEFAULT 0 NOT NULL,
    state text NOT NULL,
    attempts bigint DEFAULT 0 NOT NULL,
    error text,
    lease_owner text,
    lease_expires_at bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    next_attempt_at bigint DEFAULT 0 NOT NULL,
    lease_epoch bigint DEFAULT 0 NOT NULL,
    failed_step text,
    failed_step_index bigint,
    wait_page_id text,
    wait_deadline bigint,
    wait_on_timeout text,
    finished_at bigint,
    definition_digest text,
    CONSTRAINT runs_status_check CHECK ((status = ANY (ARRAY['ready'::text, 'running'::text, 'waiting'::text, 'succeeded'::text, 'failed'::text, 'cancelled'::text]))),
    CONSTRAINT runs_wait_on_timeout_check CHECK ((wait_on_timeout = ANY (ARRAY['fail'::text, 'continue'::text, 'cancel'::text])))
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id text NOT NULL,
    data text NOT NULL,
    expires_at bigint NOT NULL
);


--
-- Name: settings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.settings (
    key text NOT NULL,
    value text NOT NULL,
    updated_at bigint NOT NULL
);


--
-- Data for Name: _sqlx_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public._sqlx_migrations (version, description, installed_on, success, checksum, execution_time) FROM stdin;
20261123000001	init	2026-11-28 04:12:29.142085+00	t	\\x34cb9baf7d6dce3058e507137746e78c2c9bf619051d3f6b31f93372640819c092b3593fd1d311946eab05527f28a6bc	13554795
20261124100000	durable runs	2026-11-28 04:12:29.156258+00	t	\\xcf239ad34544326e37490b3c72ebb44d31e7201e22e90410492fcd7160071e0fecbfcc725c74572f9ccfbfa191520ad5	3247033
20261124110000	sessions	2026-11-28 04:12:29.159876+00	t	\\xe2deee201b5bb22e6aa11d9c3984daf1e1b62929fcbee2f6500d824028175340bdf7a23e0ec9f92546096eeafc6f04e1	5527507
20261124120000	generation events and page cache	2026-11-28 04:12:29.165582+00	t	\\x7892ce425cd2ddb54a25f066f6dc961febd074f1ac3b868c3357b5bdf77ad93b945b57605e883cefa22ae6ae431815d1	9121527
20261125000000	chat	2026-11-28 04:12:29.175057+00	t	\\x18cc9f85533b7508f0240ad9d695c597421ea907c38bf6e382122ca7efdc0be4dfb4567abaab0bf8fe09c8ad7fb3c7ee	34601441
20261126110000	page component sets	2026-11-28 04:12:29.210169+00	t	\\x6db831f3c0a084b6acaa5b3537d64f7fd43a938c8d60c198dde05f3355620dd5d468359238fc8a7b7f4951a0222cad8e	577319
20261126120000	chat cluster	2026-11-28 04:12:29.210963+00	t	\\x48fe578ed8b089881663c48bbbbb9594d1bda0dc94c33a84191a3b568d9c67dd27d352a4a49ee7f31d06406b218e4436	4308993
20261127300000	page cache provenance	2026-11-28 04:12:29.216989+00	t	\\xa570630c1184b253bbb6c5dc83eb96dd4e0c6b3edd9e534bb2eaed740c9f230911f187d5c4317f7e0cfdd9d344ecb1f4	1050864
20261127600000	run definition digest	2026-11-28 04:12:29.218101+00	t	\\x9b3f8f4b2c09e4b9386d571135636e5b3cacdfa102d4fc3e1d05b4f78d688dcd2720aea835c11c0e58a776551caf7a18	391202
20261127700000	submission readies run	2026-11-28 04:12:29.21861+00	t	\\xec208562641d7204168050ef34823c3bcd9077413e25c864c45fefbe5d8367305deeaacd0c4f83f4d5112a1fcab79d10	4150488
20261127823000	chat confirmation caller	2026-11-28 04:12:29.223+00	t	\\xb4792e83f163ed1cc91ca4451ae017ae9f34fb2cafde52500ed14dd7433c5e10b2db210c4e5fd761b2be21efed0c589b	1865847
\.


--
-- Data for Name: chat_bus; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_bus (seq, origin, session_id, body, created_at) FROM stdin;
\.


--
-- Data for Name: chat_confirmations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_confirmations (id, session_id, thread_id, call_id, operation, arguments, hash, reasons, preview, status, scope, created_at, decided_at, consumed_at, caller) FROM stdin;
\.


--
-- Data for Name: chat_executions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_executions (seq, id, session_id, thread_id, operation, arguments, hash, role, approval, confirmation_id, status, items_total, items_done, chunks_total, chunks_done, item_ids, result, error, created_at, finished_at, owner, heartbeat_at, stop_requested_at) FROM stdin;
\.


--
-- Data for Name: chat_grants; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_grants (session_id, operation, confirmation_id, created_at) FROM stdin;
\.


--
-- Data for Name: chat_messages; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_messages (id, session_id, channel, role, thread_id, body, created_at) FROM stdin;
\.


--
-- Data for Name: chat_sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_sessions (id, scope, model, created_at, updated_at) FROM stdin;
\.


--
-- Data for Name: chat_threads; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.chat_threads (id, session_id, intent, slots, status, pending_question, summary, created_at, updated_at) FROM stdin;
\.


--
-- Data for Name: demo_items; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.demo_items (id, title, description, status, priority, assignee, due_date, created_at, updated_at, completed_at) FROM stdin;
\.


--
-- Data for Name: generation_events; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.generation_events (id, generation_id, seq, kind, payload, created_at) FROM stdin;
1	c620a6a8-f53d-4c10-81e2-78eac418e08a	1	started	{"model":"heuristic:heuristic","cache":"use","max_steps":10,"prompt_bytes":413,"prompt":"Approve the invoice made before the upgrade?"}	1795839150075
2	c620a6a8-f53d-4c10-81e2-78eac418e08a	2	cache_miss	{"reason":"empty"}	1795839150079
3	c620a6a8-f53d-4c10-81e2-78eac418e08a	3	tool_call	{"turn":1,"call_id":"heuristic_0_0","tool":"Heading","component":"Heading","node":"c1"}	1795839150083
4	c620a6a8-f53d-4c10-81e2-78eac418e08a	4	tool_call	{"turn":1,"call_id":"heuristic_0_1","tool":"Text","component":"Text","node":"c2"}	1795839150083
5	c620a6a8-f53d-4c10-81e2-78eac418e08a	5	tool_call	{"turn":1,"call_id":"heuristic_0_2","tool":"Form","component":"Form","node":"c3","inside":["c4","c5","c6"]}	1795839150084
6	c620a6a8-f53d-4c10-81e2-78eac418e08a	6	validation	{"turn":1,"source":"finish","ok":true,"errors":[],"warnings":0}	1795839150084
7	c620a6a8-f53d-4c10-81e2-78eac418e08a	7	tool_call	{"turn":1,"call_id":"heuristic_0_finish","tool":"Finish"}	1795839150084
8	c620a6a8-f53d-4c10-81e2-78eac418e08a	8	finished	{"outcome":"ok","turns":1,"tokens_in":0,"tokens_out":0,"latency_ms":73,"cache_hit":false}	1795839150150
9	009a14f7-3278-4f09-be0e-77f61821dea3	1	started	{"model":"heuristic:heuristic","cache":"use","max_steps":10,"prompt_bytes":420,"prompt":"Approve the order still waiting across the upgrade?"}	1795839150201
10	009a14f7-3278-4f09-be0e-77f61821dea3	2	cache_miss	{"reason":"empty"}	1795839150270
11	009a14f7-3278-4f09-be0e-77f61821dea3	3	tool_call	{"turn":1,"call_id":"heuristic_0_0","tool":"Heading","component":"Heading","node":"c1"}	1795839150274
12	009a14f7-3278-4f09-be0e-77f61821dea3	4	tool_call	{"turn":1,"call_id":"heuristic_0_1","tool":"Text","component":"Text","node":"c2"}	1795839150274
13	009a14f7-3278-4f09-be0e-77f61821dea3	5	tool_call	{"turn":1,"call_id":"heuristic_0_2","tool":"Form","component":"Form","node":"c3","inside":["c4","c5","c6"]}	1795839150274
14	009a14f7-3278-4f09-be0e-77f61821dea3	6	validation	{"turn":1,"source":"finish","ok":true,"errors":[],"warnings":0}	1795839150275
15	009a14f7-3278-4f09-be0e-77f61821dea3	7	tool_call	{"turn":1,"call_id":"heuristic_0_finish","tool":"Finish"}	1795839150275
16	009a14f7-3278-4f09-be0e-77f61821dea3	8	finished	{"outcome":"ok","turns":1,"tokens_in":0,"tokens_out":0,"latency_ms":96,"cache_hit":false}	1795839150298
\.


--
-- Data for Name: generations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.generations (id, model, provider, prompt_hash, outcome, turns, tokens_in, tokens_out, latency_ms, cache_hit, transcript, tree, created_at, cache_lookup) FROM stdin;
c620a6a8-f53d-4c10-81e2-78eac418e08a	heuristic	heuristic	dad7338d493ac554af7fc0a747f31c54a88750763b7f525f6d9161b56f80242a	ok	1	0	0	73	f	{"cache":{"policy":"use","key":"716c4ea96df3c88f29a28d3560c05ad8bd3d567d22b0b0cdd1e386b9efccb3a1","hit":false,"result":"miss","stale":null},"attempts":[{"model":"heuristic:heuristic","end":"valid","error":null,"turns":1,"tokens_in":0,"tokens_out":0,"text_tool_calls":0,"last_errors":[],"transcript":[{"turn":1,"text":null,"stop_reason":"ToolUse","usage":{"input_tokens":0,"output_tokens":0},"text_tool_calls":0,"calls":[{"id":"heuristic_0_0","tool":"Heading","arguments":{"text":"Approve the invoice made before the upgrade?","level":1},"result":{"id":"c1"},"is_error":false},{"id":"heuristic_0_1","tool":"Text","arguments":{"text":"Please answer: your answer.","muted":true},"result":{"id":"c2"},"is_error":false},{"id":"heuristic_0_2","tool":"Form","arguments":{"children":[{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer","component":"Input"},{"label":"Approve","variant":"primary","kind":"submit","component":"Button"},{"label":"Cancel","variant":"secondary","kind":"cancel","component":"Button"}]},"result":{"id":"c3","children":[{"id":"c4"},{"id":"c5"},{"id":"c6"}]},"is_error":false},{"id":"heuristic_0_finish","tool":"Finish","arguments":{},"result":{"finished":true},"is_error":false}]}]}]}	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the invoice made before the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	1795839150148	miss
009a14f7-3278-4f09-be0e-77f61821dea3	heuristic	heuristic	9bb462384eb3d86445d30f299469229fd267bd5a8a9bf3b581f8a4af905aa86f	ok	1	0	0	96	f	{"cache":{"policy":"use","key":"09fff149eb373daee8d7bb9b5f12d5479906dd7fb44d2e14537db93298f124f5","hit":false,"result":"miss","stale":null},"attempts":[{"model":"heuristic:heuristic","end":"valid","error":null,"turns":1,"tokens_in":0,"tokens_out":0,"text_tool_calls":0,"last_errors":[],"transcript":[{"turn":1,"text":null,"stop_reason":"ToolUse","usage":{"input_tokens":0,"output_tokens":0},"text_tool_calls":0,"calls":[{"id":"heuristic_0_0","tool":"Heading","arguments":{"text":"Approve the order still waiting across the upgrade?","level":1},"result":{"id":"c1"},"is_error":false},{"id":"heuristic_0_1","tool":"Text","arguments":{"text":"Please answer: your answer.","muted":true},"result":{"id":"c2"},"is_error":false},{"id":"heuristic_0_2","tool":"Form","arguments":{"children":[{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer","component":"Input"},{"label":"Approve","variant":"primary","kind":"submit","component":"Button"},{"label":"Cancel","variant":"secondary","kind":"cancel","component":"Button"}]},"result":{"id":"c3","children":[{"id":"c4"},{"id":"c5"},{"id":"c6"}]},"is_error":false},{"id":"heuristic_0_finish","tool":"Finish","arguments":{},"result":{"finished":true},"is_error":false}]}]}]}	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the order still waiting across the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	1795839150297	miss
\.


--
-- Data for Name: page_cache; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.page_cache (key, tree, generation_id, model, hits, created_at, last_hit_at, provenance) FROM stdin;
716c4ea96df3c88f29a28d3560c05ad8bd3d567d22b0b0cdd1e386b9efccb3a1	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the invoice made before the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	c620a6a8-f53d-4c10-81e2-78eac418e08a	heuristic:heuristic	0	1795839150141	\N	{"prompt":"Approve the invoice made before the upgrade?","values":{}}
09fff149eb373daee8d7bb9b5f12d5479906dd7fb44d2e14537db93298f124f5	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the order still waiting across the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	009a14f7-3278-4f09-be0e-77f61821dea3	heuristic:heuristic	0	1795839150277	\N	{"prompt":"Approve the order still waiting across the upgrade?","values":{}}
\.


--
-- Data for Name: pages; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.pages (id, token_hash, run_id, generation_id, status, tree, schema, data, response, created_at, expires_at, submitted_at, component_set) FROM stdin;
23717ae7-dbcf-452a-baa1-be8dd91d1554	b339e759b6f7fa5426cfb4771b1ea7ca0eee5a8cb966afbe8f2923f6659c7449	5c23d72f-189c-4a05-aae7-9b9bda538b24	\N	open	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the order still waiting across the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"answer":{"title":"Your answer","type":"string","minLength":1}},"required":["answer"],"additionalProperties":false}	{}	\N	1795839150299	1796443950299	\N	{"Alert":"built-in","Badge":"built-in","Button":"built-in","Card":"built-in","Chart":"built-in","Checkbox":"built-in","CheckboxGroup":"built-in","Code":"built-in","Container":"built-in","DecisionTable":"built-in","Details":"built-in","Divider":"built-in","DownloadLink":"built-in","Form":"built-in","Heading":"built-in","Image":"built-in","Input":"built-in","KeyValue":"built-in","Link":"built-in","List":"built-in","MultiTextInput":"built-in","ProgressBar":"built-in","RadioGroup":"built-in","Select":"built-in","Stat":"built-in","Table":"built-in","Text":"built-in","TextArea":"built-in","Timeline":"built-in"}
a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c	6033ffad9d16904db5ef4609b937376878fc691d2ec113c229fb6c8bd33b5084	861be4ea-9fed-4dfd-b09c-5b57e1802fb3	\N	submitted	{"nodes":{"c1":{"component":"Heading","props":{"text":"Approve the invoice made before the upgrade?","level":1}},"c2":{"component":"Text","props":{"text":"Please answer: your answer.","muted":true}},"c3":{"component":"Form","props":{},"children":["c4","c5","c6"]},"c4":{"component":"Input","props":{"label":"Your answer","type":"text","required":true,"minLength":1,"name":"answer"}},"c5":{"component":"Button","props":{"label":"Approve","variant":"primary","kind":"submit"}},"c6":{"component":"Button","props":{"label":"Cancel","variant":"secondary","kind":"cancel"}}},"order":["c1","c2","c3"]}	{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"answer":{"title":"Your answer","type":"string","minLength":1}},"required":["answer"],"additionalProperties":false}	{}	{"answer":"approved before the upgrade"}	1795839150151	1796443950151	1795839150547	{"Alert":"built-in","Badge":"built-in","Button":"built-in","Card":"built-in","Chart":"built-in","Checkbox":"built-in","CheckboxGroup":"built-in","Code":"built-in","Container":"built-in","DecisionTable":"built-in","Details":"built-in","Divider":"built-in","DownloadLink":"built-in","Form":"built-in","Heading":"built-in","Image":"built-in","Input":"built-in","KeyValue":"built-in","Link":"built-in","List":"built-in","MultiTextInput":"built-in","ProgressBar":"built-in","RadioGroup":"built-in","Select":"built-in","Stat":"built-in","Table":"built-in","Text":"built-in","TextArea":"built-in","Timeline":"built-in"}
\.


--
-- Data for Name: run_steps; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.run_steps (run_id, step_index, name, status, output, error, attempts, started_at, finished_at, input) FROM stdin;
861be4ea-9fed-4dfd-b09c-5b57e1802fb3	0	Ask	succeeded	{"kind":"page","page":{"page_id":"a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c","webhook":{"page_id":"a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c"}}}	\N	1	1795839150066	1795839150152	null
861be4ea-9fed-4dfd-b09c-5b57e1802fb3	1	Notify	succeeded	{"kind":"wait","page_id":"a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c","deadline_ms":1796443950156,"on_timeout":"continue","default_response":{"$cancelled":true,"$expired":true}}	\N	1	1795839150154	1795839150156	{"page_id":"a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c","webhook":{"page_id":"a22d75db-7a4d-4f3d-aaf1-0aa93e3e8d6c"}}
5c23d72f-189c-4a05-aae7-9b9bda538b24	0	Ask	succeeded	{"kind":"page","page":{"page_id":"23717ae7-dbcf-452a-baa1-be8dd91d1554","webhook":{"page_id":"23717ae7-dbcf-452a-baa1-be8dd91d1554"}}}	\N	1	1795839150191	1795839150301	null
5c23d72f-189c-4a05-aae7-9b9bda538b24	1	Notify	succeeded	{"kind":"wait","page_id":"23717ae7-dbcf-452a-baa1-be8dd91d1554","deadline_ms":1796443950304,"on_timeout":"continue","default_response":{"$cancelled":true,"$expired":true}}	\N	1	1795839150303	1795839150304	{"page_id":"23717ae7-dbcf-452a-baa1-be8dd91d1554","webhook":{"page_id":"23717ae7-dbcf-452a-baa1-be8dd91d1554"}}
861be4ea-9fed-4dfd-b09c-5b57e1802fb3	2	Callback	succeeded	{"kind":"none"}	\N	1	1795839150664	1795839150665	{"answer":"approved before the upgrade"}
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.runs (id, workflow, status, cursor, state, attempts, error, lease_owner, lease_expires_at, created_at, updated_at, next_attempt_at, lease_epoch, failed_step, failed_step_index, wait_page_id, wait_deadline, wait_on_timeout, finished_at, definition_digest) FROM stdin;
5c23d72f-189c-4a05-aae7-9b9bda538b24	ask	waiting	2	{"prompt":"Approve the order still waiting across the upgrade?","prompt_template":"Approve the order still waiting across the upgrade?","schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"answer":{"title":"Your answer","type":"string","minLength":1}},"required":["answer"],"additionalProperties":false},"data":{},"expires_in_secs":604800,"notify":false,"callback_url":null,"cache":"use"}	0	\N	\N	\N	1795839150187	1795839150304	1795839150304	1	\N	\N	23717ae7-dbcf-452a-baa1-be8dd91d1554	1796443950304	continue	\N	\N
861be4ea-9fed-4dfd-b09c-5b57e1802fb3	ask	succeeded	3	{"prompt":"Approve the invoice made before the upgrade?","prompt_template":"Approve the invoice made before the upgrade?","schema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"answer":{"title":"Your answer","type":"string","minLength":1}},"required":["answer"],"additionalProperties":false},"data":{},"expires_in_secs":604800,"notify":false,"callback_url":null,"cache":"use"}	0	\N	\N	\N	1795839150061	1795839150665	1795839150665	2	\N	\N	\N	\N	\N	1795839150665	\N
\.


--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.sessions (id, data, expires_at) FROM stdin;
\.


--
-- Data for Name: settings; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.settings (key, value, updated_at) FROM stdin;
csrf_key	d0399cd6398b84116fbf4e8462592fb491c79e729ddf27ba59d5e02b43533ebb	1795839149226
\.


--
-- Name: chat_bus_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.chat_bus_seq_seq', 1, false);


--
-- Name: chat_executions_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.chat_executions_seq_seq', 1, false);


--
-- Name: chat_messages_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.chat_messages_id_seq', 1, false);


--
-- Name: generation_events_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.generation_events_id_seq', 16, true);


--
-- Name: _sqlx_migrations _sqlx_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public._sqlx_migrations
    ADD CONSTRAINT _sqlx_migrations_pkey PRIMARY KEY (version);


--
-- Name: chat_bus chat_bus_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_bus
    ADD CONSTRAINT chat_bus_pkey PRIMARY KEY (seq);


--
-- Name: chat_confirmations chat_confirmations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_confirmations
    ADD CONSTRAINT chat_confirmations_pkey PRIMARY KEY (id);


--
-- Name: chat_executions chat_executions_confirmation_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_executions
    ADD CONSTRAINT chat_executions_confirmation_id_key UNIQUE (confirmation_id);


--
-- Name: chat_executions chat_executions_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_executions
    ADD CONSTRAINT chat_executions_id_key UNIQUE (id);


--
-- Name: chat_executions chat_executions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_executions
    ADD CONSTRAINT chat_executions_pkey PRIMARY KEY (seq);


--
-- Name: chat_grants chat_grants_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_grants
    ADD CONSTRAINT chat_grants_pkey PRIMARY KEY (session_id, operation);


--
-- Name: chat_messages chat_messages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_messages
    ADD CONSTRAINT chat_messages_pkey PRIMARY KEY (id);


--
-- Name: chat_sessions chat_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_sessions
    ADD CONSTRAINT chat_sessions_pkey PRIMARY KEY (id);


--
-- Name: chat_threads chat_threads_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_threads
    ADD CONSTRAINT chat_threads_pkey PRIMARY KEY (id);


--
-- Name: demo_items demo_items_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.demo_items
    ADD CONSTRAINT demo_items_pkey PRIMARY KEY (id);


--
-- Name: generation_events generation_events_generation_id_seq_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.generation_events
    ADD CONSTRAINT generation_events_generation_id_seq_key UNIQUE (generation_id, seq);


--
-- Name: generation_events generation_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.generation_events
    ADD CONSTRAINT generation_events_pkey PRIMARY KEY (id);


--
-- Name: generations generations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.generations
    ADD CONSTRAINT generations_pkey PRIMARY KEY (id);


--
-- Name: page_cache page_cache_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.page_cache
    ADD CONSTRAINT page_cache_pkey PRIMARY KEY (key);


--
-- Name: pages pages_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT pages_pkey PRIMARY KEY (id);


--
-- Name: pages pages_token_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT pages_token_hash_key UNIQUE (token_hash);


--
-- Name: run_steps run_steps_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_steps
    ADD CONSTRAINT run_steps_pkey PRIMARY KEY (run_id, step_index);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (id);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);


--
-- Name: chat_bus_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_bus_created_idx ON public.chat_bus USING btree (created_at);


--
-- Name: chat_confirmations_session_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_confirmations_session_idx ON public.chat_confirmations USING btree (session_id, status);


--
-- Name: chat_executions_running_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_executions_running_idx ON public.chat_executions USING btree (status) WHERE (status = 'running'::text);


--
-- Name: chat_executions_session_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_executions_session_idx ON public.chat_executions USING btree (session_id, seq);


--
-- Name: chat_executions_thread_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_executions_thread_idx ON public.chat_executions USING btree (thread_id, seq);


--
-- Name: chat_messages_session_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_messages_session_idx ON public.chat_messages USING btree (session_id, channel, id);


--
-- Name: chat_threads_session_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX chat_threads_session_idx ON public.chat_threads USING btree (session_id, updated_at);


--
-- Name: demo_items_status_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX demo_items_status_idx ON public.demo_items USING btree (status, updated_at);


--
-- Name: demo_items_updated_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX demo_items_updated_idx ON public.demo_items USING btree (updated_at);


--
-- Name: generations_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX generations_created_idx ON public.generations USING btree (created_at);


--
-- Name: pages_run_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX pages_run_idx ON public.pages USING btree (run_id);


--
-- Name: runs_claim_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_claim_idx ON public.runs USING btree (status, next_attempt_at);


--
-- Name: runs_created_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_created_idx ON public.runs USING btree (created_at, id);


--
-- Name: runs_lease_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_lease_idx ON public.runs USING btree (status, lease_expires_at);


--
-- Name: runs_status_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_status_idx ON public.runs USING btree (status, updated_at);


--
-- Name: runs_wait_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_wait_idx ON public.runs USING btree (status, wait_deadline);


--
-- Name: sessions_expiry_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_expiry_idx ON public.sessions USING btree (expires_at);


--
-- Name: pages pages_submitted_readies_run; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER pages_submitted_readies_run AFTER UPDATE OF status ON public.pages FOR EACH ROW WHEN (((old.status = 'open'::text) AND (new.status = 'submitted'::text) AND (new.run_id IS NOT NULL))) EXECUTE FUNCTION public.tessera_submission_readies_run();


--
-- Name: chat_confirmations chat_confirmations_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_confirmations
    ADD CONSTRAINT chat_confirmations_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.chat_sessions(id) ON DELETE CASCADE;


--
-- Name: chat_confirmations chat_confirmations_thread_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_confirmations
    ADD CONSTRAINT chat_confirmations_thread_id_fkey FOREIGN KEY (thread_id) REFERENCES public.chat_threads(id) ON DELETE CASCADE;


--
-- Name: chat_executions chat_executions_confirmation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_executions
    ADD CONSTRAINT chat_executions_confirmation_id_fkey FOREIGN KEY (confirmation_id) REFERENCES public.chat_confirmations(id);


--
-- Name: chat_executions chat_executions_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_executions
    ADD CONSTRAINT chat_executions_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.chat_sessions(id) ON DELETE CASCADE;


--
-- Name: chat_grants chat_grants_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_grants
    ADD CONSTRAINT chat_grants_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.chat_sessions(id) ON DELETE CASCADE;


--
-- Name: chat_messages chat_messages_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_messages
    ADD CONSTRAINT chat_messages_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.chat_sessions(id) ON DELETE CASCADE;


--
-- Name: chat_threads chat_threads_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.chat_threads
    ADD CONSTRAINT chat_threads_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.chat_sessions(id) ON DELETE CASCADE;


--
-- Name: pages pages_generation_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT pages_generation_id_fkey FOREIGN KEY (generation_id) REFERENCES public.generations(id);


--
-- Name: pages pages_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.pages
    ADD CONSTRAINT pages_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- Name: run_steps run_steps_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.run_steps
    ADD CONSTRAINT run_steps_run_id_fkey FOREIGN KEY (run_id) REFERENCES public.runs(id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict e0aVOh3TT8VMXToavOx5w3pfC5dlukPNrnhUQgVp98aWkPuaidPdbG2WnodMXlB

