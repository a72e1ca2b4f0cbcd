//! The integration test binary: one module per feature, shared helpers in `helpers`.

mod agent;
mod answerable;
mod asks;
mod binary;
mod chat;
mod chat_cluster;
mod chat_tools;
mod chat_ui;
mod chat_views;
mod components;
mod crash;
mod demo_items;
mod health;
mod helpers;
mod home;
mod llm;
mod login;
mod metrics;
mod notify;
mod pages;
mod quality;
mod runs;
mod selections;
mod store;
mod tokens;
mod workflow;
