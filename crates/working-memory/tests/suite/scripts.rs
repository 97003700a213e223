//! Issue 27 (Deliver 4): the title and Key Facts guards in every script. They once counted
//! ASCII words only, so a Chinese title was replaced freely and a Chinese Key Facts rewrite
//! that dropped five of six facts was accepted.

use memory_protocol::working_memory::{GuardKind, WorkingMemorySection::*};
use serde_json::json;

use super::{body, guards_of, make_wm, merged};

/// An UPDATE of the title from `old` to `new`: true when it was refused (the title kept).
fn title_refused(old: &str, new: &str) -> bool {
    let outcome = merged(
        &make_wm(&[(SessionTitle, old)]),
        json!({"Session Title": {"op": "UPDATE", "content": new}}),
    );
    let refused = body(&outcome, SessionTitle) == old;
    assert_eq!(
        refused,
        guards_of(&outcome, SessionTitle)
            .iter()
            .any(|(guard, _)| *guard == GuardKind::TitleStability)
    );
    refused
}

#[test]
fn a_chinese_title_is_not_replaced_freely() {
    assert!(title_refused("修复潮汐表导入器", "周末购物清单"));
    assert!(!title_refused("修复潮汐表导入器", "潮汐表导入器：四月格式"));
}

#[test]
fn titles_in_cyrillic_arabic_and_accented_latin_are_guarded() {
    assert!(title_refused("Импорт таблиц приливов", "Список покупок"));
    assert!(!title_refused(
        "Импорт таблиц приливов",
        "Импорт: апрельский формат"
    ));
    assert!(title_refused("استيراد جداول المد", "قائمة التسوق"));
    assert!(!title_refused(
        "استيراد جداول المد",
        "جداول المد لشهر أبريل"
    ));
    assert!(title_refused(
        "Réparer l'importateur des marées",
        "Liste de courses"
    ));
    assert!(!title_refused(
        "Réparer l'importateur des marées",
        "Marées d'avril"
    ));
}

/// A Key Facts rewrite from six facts to one: refused (its new items appended instead), so
/// every old fact stays.
fn six_to_one_is_refused(facts: [&str; 6]) {
    let old: String = facts.iter().map(|fact| format!("- {fact}\n")).collect();
    let outcome = merged(
        &make_wm(&[(KeyFactsAndDecisions, &old)]),
        json!({"Key Facts & Decisions": {"op": "UPDATE", "content": format!("- {}", facts[0])}}),
    );
    let result = body(&outcome, KeyFactsAndDecisions);
    for fact in facts {
        assert!(result.contains(fact), "{fact} lost:\n{result}");
    }
    assert!(
        guards_of(&outcome, KeyFactsAndDecisions)
            .iter()
            .any(|(guard, _)| *guard == GuardKind::KeyFactsConsolidation)
    );
}

#[test]
fn a_chinese_key_facts_rewrite_that_drops_five_of_six_facts_is_refused() {
    six_to_one_is_refused([
        "潮汐数据来自国家海洋局",
        "时间统一使用协调世界时",
        "导入器每天凌晨运行一次",
        "测试覆盖六个港口站点",
        "用户要求保留原始文件",
        "决定放弃旧的解析器",
    ]);
}

#[test]
fn key_facts_rewrites_in_cyrillic_arabic_and_accented_latin_are_refused() {
    six_to_one_is_refused([
        "Данные приходят от Росгидромета",
        "Петров отвечает за импорт",
        "Время хранится в UTC по решению Смирнова",
        "Тесты покрывают порт Мурманск",
        "Старый парсер заменён по просьбе Иванова",
        "Отчёт уходит в Архангельск",
    ]);
    six_to_one_is_refused([
        "البيانات تأتي من هيئة المساحة",
        "أحمد مسؤول عن الاستيراد",
        "التوقيت محفوظ بالتوقيت العالمي",
        "الاختبارات تغطي ميناء جدة",
        "تقرر استبدال المحلل القديم",
        "التقرير يرسل إلى الدمام",
    ]);
    six_to_one_is_refused([
        "Les données viennent de Météo-France",
        "Émile gère l'import",
        "Heures stockées en UTC selon Hélène",
        "Les tests couvrent le port de Sète",
        "Ancien analyseur remplacé à la demande de Zoé",
        "Le rapport part à Besançon",
    ]);
}

/// A consolidation that keeps the facts, reworded and merged, still passes in Chinese.
#[test]
fn a_chinese_consolidation_that_keeps_the_facts_passes() {
    let old = "- 潮汐数据来自国家海洋局\n- 时间统一使用协调世界时\n- 导入器每天凌晨运行一次\n";
    let new = "- 潮汐数据来自国家海洋局，时间统一使用协调世界时\n- 导入器每天凌晨运行一次";
    let outcome = merged(
        &make_wm(&[(KeyFactsAndDecisions, old)]),
        json!({"Key Facts & Decisions": {"op": "UPDATE", "content": new}}),
    );
    assert_eq!(body(&outcome, KeyFactsAndDecisions), new);
}

/// An APPEND repeating an item with a full stop of the scripts written without spaces (`。`,
/// `．`, `｡`) is a duplicate, as `done.` repeats `done`: the full stop is not part of the key.
#[test]
fn an_item_repeated_with_an_ideographic_full_stop_is_not_added_again() {
    let old = "- 港务长同意重试三次\n- 第二批已导入";
    for repeat in [
        "港务长同意重试三次。",
        "港务长同意重试三次．",
        "港务长同意重试三次｡",
    ] {
        for section in [TaskAndGoals, KeyFactsAndDecisions, ErrorsAndCorrections] {
            let outcome = merged(
                &make_wm(&[(section, old)]),
                json!({section.header(): {"op": "APPEND", "items": [repeat, "第三批待导入。"]}}),
            );
            assert_eq!(
                body(&outcome, section),
                format!("{old}\n- 第三批待导入。"),
                "{section:?} {repeat:?}"
            );
            assert!(
                guards_of(&outcome, section)
                    .iter()
                    .any(|(guard, _)| *guard == GuardKind::DuplicateItems),
                "{section:?} {repeat:?}"
            );
        }
    }
}
