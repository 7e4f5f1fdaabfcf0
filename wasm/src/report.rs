//! The noise report for `npx noise-filter report` (`npm/src/cli.js`): the
//! core's [`report`] with its types converted, nothing decided here. In
//! the main entry's wasm only (feature `handler`): the matcher-only wasm a
//! page downloads does not carry it.

use noise_filter_core::report::{self, ListSource, Plan, Report, Stdout, Summary};
use wasm_bindgen::prelude::*;

use crate::error;

/// A report command, read by the core from its arguments.
#[wasm_bindgen(js_name = ReportPlan)]
#[derive(Debug)]
pub struct JsReportPlan {
    plan: Plan,
}

#[wasm_bindgen(js_class = ReportPlan)]
impl JsReportPlan {
    /// The arguments after `report`; `env_key`: `NOISE_FILTER_KEY`.
    #[wasm_bindgen(constructor)]
    pub fn new(args: Vec<String>, env_key: Option<String>) -> Result<JsReportPlan, JsError> {
        let plan = report::plan(&args, env_key.as_deref()).map_err(error)?;
        Ok(JsReportPlan { plan })
    }

    /// How the command is used.
    pub fn usage() -> String {
        report::USAGE.to_owned()
    }

    /// `--help` was given.
    #[wasm_bindgen(getter)]
    pub fn help(&self) -> bool {
        self.plan.help
    }

    /// The export's path, `-` for standard input.
    #[wasm_bindgen(getter)]
    pub fn input(&self) -> String {
        self.plan.input.clone()
    }

    /// `builtin`, `file` or `url`.
    #[wasm_bindgen(getter, js_name = listKind)]
    pub fn list_kind(&self) -> String {
        match self.plan.list {
            ListSource::Builtin => "builtin",
            ListSource::File(_) => "file",
            ListSource::Url { .. } => "url",
        }
        .to_owned()
    }

    /// The pattern file (`--patterns`) or the list's address (`--url`).
    #[wasm_bindgen(getter, js_name = listLocation)]
    pub fn list_location(&self) -> Option<String> {
        match &self.plan.list {
            ListSource::Builtin => None,
            ListSource::File(path) => Some(path.clone()),
            ListSource::Url { url, .. } => Some(url.clone()),
        }
    }

    /// The API key for `--url`.
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> Option<String> {
        match &self.plan.list {
            ListSource::Url { key, .. } => Some(key.clone()),
            _ => None,
        }
    }

    /// `--html FILE`.
    #[wasm_bindgen(getter)]
    pub fn html(&self) -> Option<String> {
        self.plan.html.clone()
    }

    /// What standard output carries: `summary`, `json`, `patterns`, `sentry`.
    #[wasm_bindgen(getter)]
    pub fn stdout(&self) -> String {
        match self.plan.stdout {
            Stdout::Summary => "summary",
            Stdout::Json => "json",
            Stdout::EmitPatterns => "patterns",
            Stdout::EmitSentry => "sentry",
        }
        .to_owned()
    }

    /// The report, over the built-in catalog or `list` (the pattern file's
    /// bytes, or the body `--url` answered).
    pub fn start(&self, list: Option<Vec<u8>>) -> Result<JsReport, JsError> {
        let report = self.plan.start(list.as_deref()).map_err(error)?;
        Ok(JsReport {
            report: Some(report),
            summary: None,
        })
    }
}

/// A report being read, then its outputs.
#[wasm_bindgen(js_name = Report)]
#[derive(Debug)]
pub struct JsReport {
    report: Option<Report>,
    summary: Option<Summary>,
}

#[wasm_bindgen(js_class = Report)]
impl JsReport {
    /// Reads the next bytes of the export.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), JsError> {
        let report = self
            .report
            .as_mut()
            .ok_or_else(|| error("the report is finished"))?;
        report.feed(chunk).map_err(error)
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> f64 {
        self.report.as_ref().map_or(0.0, |r| r.bytes() as f64)
    }

    /// Events counted so far.
    pub fn events(&self) -> f64 {
        self.report.as_ref().map_or(0.0, |r| r.events() as f64)
    }

    /// The end of the export.
    pub fn finish(&mut self) -> Result<(), JsError> {
        let report = self
            .report
            .take()
            .ok_or_else(|| error("the report is finished"))?;
        self.summary = Some(report.finish().map_err(error)?);
        Ok(())
    }

    fn summary(&self) -> Result<&Summary, JsError> {
        self.summary
            .as_ref()
            .ok_or_else(|| error("the report is not finished"))
    }

    /// The summary, readable at 80 columns.
    pub fn text(&self) -> Result<String, JsError> {
        Ok(self.summary()?.text())
    }

    /// The report as JSON.
    pub fn json(&self) -> Result<String, JsError> {
        Ok(self.summary()?.json())
    }

    /// The report as one HTML page.
    pub fn html(&self) -> Result<String, JsError> {
        Ok(self.summary()?.html())
    }

    /// `--emit patterns`.
    #[wasm_bindgen(js_name = emitPatterns)]
    pub fn emit_patterns(&self) -> Result<String, JsError> {
        self.summary()?.emit_patterns().map_err(error)
    }

    /// `--emit sentry`.
    #[wasm_bindgen(js_name = emitSentry)]
    pub fn emit_sentry(&self) -> Result<String, JsError> {
        self.summary()?.emit_sentry().map_err(error)
    }
}

/// Why a `--url` fetch failed, in the core's words.
#[wasm_bindgen(js_name = reportFetchRefusal)]
pub fn report_fetch_refusal(url: &str, status: u16, body: &[u8]) -> String {
    report::fetch_refusal(url, status, body)
}
