//! Topical-Chat (Gopalakrishnan et al. 2019): conversations, the pre-built reading sets that
//! point each agent's fact sections (`FS1`–`FS3`) at Wikipedia lead sections, and `wiki.json`
//! (text → id maps, inverted here).
//!
//! [`to_items`] turns every turn after the first into an item whose context is the earlier
//! turns and whose knowledge is the Wikipedia text of the fact sections the turn cites.
//! Reddit fun facts and Washington Post articles need online APIs and are not resolved.
//! Turn ratings are kept as the quality `turn_rating` (Poor 1, Not Good 2, Passable 3, Good 4,
//! Excellent 5; empty = missing), one rater (the partner), no criterion.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::item::{Corpus, DialogueItem, Rating, Turn};
use crate::json::{Doc, read_json};

/// One message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicalTurn {
    /// The text.
    pub message: String,
    /// `agent_1` or `agent_2`.
    pub agent: String,
    /// The writer's self-reported sentiment.
    pub sentiment: String,
    /// Cited knowledge: `FS1`–`FS3`, `AS1`–`AS4`, `Personal Knowledge`.
    pub knowledge_source: Vec<String>,
    /// The partner's rating of the turn (may be empty).
    pub turn_rating: String,
    /// The Wikipedia text of the fact sections it cites, once resolved ([`resolve_knowledge`];
    /// `None` before, or when it cites none that resolve offline).
    #[serde(default)]
    pub knowledge: Option<String>,
}

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicalConversation {
    /// Conversation id (`t_…`).
    pub id: String,
    /// Source article.
    pub article_url: String,
    /// Knowledge configuration, A–D.
    pub config: String,
    /// Messages in order.
    pub turns: Vec<TopicalTurn>,
    /// Each agent's rating of the conversation, by agent.
    pub conversation_rating: BTreeMap<String, String>,
}

/// One fact section of a reading set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactSection {
    /// The entity.
    pub entity: String,
    /// Id of its shortened Wikipedia lead section.
    pub shortened_wiki: Option<u64>,
    /// Id of its summarised Wikipedia lead section.
    pub summarized_wiki: Option<u64>,
    /// Reddit fun-fact ids (not resolvable offline).
    pub fun_facts: Vec<String>,
}

/// A conversation's reading set: each agent's fact sections by name (`FS1`, …).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReadingSet {
    /// Fact sections by agent, then by section name.
    pub agents: BTreeMap<String, BTreeMap<String, FactSection>>,
}

/// Wikipedia snippets by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Wiki {
    /// `shortened_wiki_lead_section` texts.
    pub shortened: HashMap<u64, String>,
    /// `summarized_wiki_lead_section` texts.
    pub summarized: HashMap<u64, String>,
}

/// Loads a conversations file (`valid_rare.json`, …), conversations sorted by id.
///
/// # Errors
/// I/O, invalid JSON or a malformed record named by its JSON path.
pub fn load_conversations(path: &Path) -> Result<Vec<TopicalConversation>> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut out = Vec::new();
    for (id, conv) in doc.object(&root, "$")? {
        let at = format!("[{id:?}]");
        let mut turns = Vec::new();
        for (k, t) in doc.array(doc.field(conv, &at, "content")?, &format!("{at}.content"))?.iter().enumerate() {
            let tat = format!("{at}.content[{k}]");
            let s = |key: &str| -> Result<String> { Ok(doc.str(doc.field(t, &tat, key)?, &format!("{tat}.{key}"))?.to_owned()) };
            turns.push(TopicalTurn {
                message: s("message")?,
                agent: s("agent")?,
                sentiment: s("sentiment")?,
                knowledge_source: doc.strings(doc.field(t, &tat, "knowledge_source")?, &format!("{tat}.knowledge_source"))?,
                turn_rating: s("turn_rating")?,
                knowledge: None,
            });
        }
        let mut conversation_rating = BTreeMap::new();
        for (agent, r) in doc.object(doc.field(conv, &at, "conversation_rating")?, &format!("{at}.conversation_rating"))? {
            conversation_rating.insert(agent.clone(), doc.str(r, &format!("{at}.conversation_rating.{agent}"))?.to_owned());
        }
        out.push(TopicalConversation {
            id: id.clone(),
            article_url: doc.str(doc.field(conv, &at, "article_url")?, &format!("{at}.article_url"))?.to_owned(),
            config: doc.str(doc.field(conv, &at, "config")?, &format!("{at}.config"))?.to_owned(),
            turns,
            conversation_rating,
        });
    }
    Ok(out)
}

/// Loads a pre-built reading-sets file, by conversation id.
///
/// # Errors
/// I/O, invalid JSON or a malformed record named by its JSON path.
pub fn load_reading_sets(path: &Path) -> Result<BTreeMap<String, ReadingSet>> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let mut out = BTreeMap::new();
    for (id, set) in doc.object(&root, "$")? {
        let mut agents = BTreeMap::new();
        for agent in ["agent_1", "agent_2"] {
            let aat = format!("[{id:?}].{agent}");
            let mut sections = BTreeMap::new();
            for (name, fs) in doc.object(doc.field(set, &format!("[{id:?}]"), agent)?, &aat)? {
                let fat = format!("{aat}.{name}");
                let wiki = |key: &str| -> Result<Option<u64>> { fs.get(key).map(|v| v.as_u64().ok_or_else(|| doc.err(&format!("{fat}.{key}"), "expected an integer id"))).transpose() };
                sections.insert(
                    name.clone(),
                    FactSection {
                        entity: doc.str(doc.field(fs, &fat, "entity")?, &format!("{fat}.entity"))?.to_owned(),
                        shortened_wiki: wiki("shortened_wiki_lead_section")?,
                        summarized_wiki: wiki("summarized_wiki_lead_section")?,
                        fun_facts: match fs.get("fun_facts") {
                            Some(f) => doc.strings(f, &format!("{fat}.fun_facts"))?,
                            None => Vec::new(),
                        },
                    },
                );
            }
            agents.insert(agent.to_owned(), sections);
        }
        out.insert(id.clone(), ReadingSet { agents });
    }
    Ok(out)
}

/// Loads `wiki.json` and inverts its text → id maps.
///
/// # Errors
/// I/O, invalid JSON, or a non-integer id.
pub fn load_wiki(path: &Path) -> Result<Wiki> {
    let root = read_json(path)?;
    let doc = Doc::file(path);
    let invert = |key: &str| -> Result<HashMap<u64, String>> {
        doc.object(doc.field(&root, "$", key)?, &format!("$.{key}"))?
            .iter()
            .map(|(text, id)| id.as_u64().map(|id| (id, text.clone())).ok_or_else(|| doc.err(&format!("$.{key}"), "expected integer ids")))
            .collect()
    };
    Ok(Wiki { shortened: invert("shortened_wiki_lead_section")?, summarized: invert("summarized_wiki_lead_section")? })
}

fn rating_value(r: &str) -> Option<f64> {
    Some(match r {
        "Poor" => 1.0,
        "Not Good" => 2.0,
        "Passable" => 3.0,
        "Good" => 4.0,
        "Excellent" => 5.0,
        _ => return None,
    })
}

/// The knowledge of turn `turn` of `conv`: the Wikipedia lead sections (shortened, else
/// summarised) of the fact sections it cites in its writer's reading set, one per line; `None`
/// when it cites none that resolve (articles, personal knowledge, fun facts).
pub fn turn_knowledge(conv: &TopicalConversation, turn: usize, reading_sets: &BTreeMap<String, ReadingSet>, wiki: &Wiki) -> Option<String> {
    let t = conv.turns.get(turn)?;
    let knowledge: Vec<&str> = t
        .knowledge_source
        .iter()
        .filter_map(|src| {
            let fs = reading_sets.get(&conv.id)?.agents.get(&t.agent)?.get(src)?;
            fs.shortened_wiki.and_then(|id| wiki.shortened.get(&id)).or_else(|| fs.summarized_wiki.and_then(|id| wiki.summarized.get(&id))).map(String::as_str)
        })
        .collect();
    (!knowledge.is_empty()).then(|| knowledge.join("\n"))
}

/// Fills every turn's [`TopicalTurn::knowledge`] ([`turn_knowledge`]), so that pairs built from
/// the conversations carry it. Returns how many turns got knowledge.
pub fn resolve_knowledge(conversations: &mut [TopicalConversation], reading_sets: &BTreeMap<String, ReadingSet>, wiki: &Wiki) -> usize {
    let mut found = 0;
    for conv in conversations.iter_mut() {
        let resolved: Vec<Option<String>> = (0..conv.turns.len()).map(|k| turn_knowledge(conv, k, reading_sets, wiki)).collect();
        for (t, k) in conv.turns.iter_mut().zip(resolved) {
            found += usize::from(k.is_some());
            t.knowledge = k;
        }
    }
    found
}

/// One item per turn after the first (see the module docs).
pub fn to_items(conversations: &[TopicalConversation], reading_sets: &BTreeMap<String, ReadingSet>, wiki: &Wiki) -> Vec<DialogueItem> {
    let mut items = Vec::new();
    for conv in conversations {
        let turns: Vec<Turn> = conv.turns.iter().map(|t| Turn { speaker: Some(t.agent.clone()), text: t.message.trim().to_owned(), amr: None }).collect();
        for (k, t) in conv.turns.iter().enumerate().skip(1) {
            let knowledge = turn_knowledge(conv, k, reading_sets, wiki);
            items.push(DialogueItem {
                id: format!("{}#{k}", conv.id),
                corpus: Corpus::TopicalChat,
                context: turns[..k].to_vec(),
                response: Some(turns[k].clone()),
                references: Vec::new(),
                knowledge,
                system: Some("human".to_owned()),
                annotators: Vec::new(),
                ratings: vec![Rating { quality: "turn_rating".to_owned(), criterion: None, scores: vec![rating_value(&t.turn_rating)] }],
            });
        }
    }
    items
}
