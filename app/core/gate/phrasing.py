"""The claim rules' phrasings in the other languages a summary is written in: German,
French, Spanish, Portuguese and Italian beside English.

The summary prompt asks for the conversation's own language, so a summary of a German
session says "Der Nutzer hat gebeten, …" and an injection in it says "Du darfst …". The
rules of `app.core.gate.claims` read what a sentence *is* — a claim about what the user
asked, or words addressed to the agent — and those are these phrasings in any language:

- a user claim: the user (der Nutzer, l'utilisateur, el usuario, o usuário, l'utente)
  with a verb of asking, wanting, saying or permitting. German puts the participle last
  ("Der Nutzer hat die Validierung zu entfernen gebeten"), so the claim is the clause's
  words between the subject and the verb as well as after it (`user_claim`).
- an instruction: the second person obliged or permitted ("du darfst", "vous pouvez",
  "puedes"), the agent told what it may do ("der Agent soll", "l'agent doit"), "from now
  on", secrecy ("sag Minh nichts", "sans demander"), confirmations skipped, or every
  credential or environment variable to be printed or sent (`instructs`).

Each pattern reads lower-cased text with quoted spans blanked, as the English ones do.
"""

from __future__ import annotations

import re

_USER_NOUN = (
    r"(?:der|die|dem|den)\s+(?:nutzer|benutzer|anwender|user|kunde)(?:in|s)?"
    r"|l['’]utilisat(?:eur|rice)|el\s+usuario|la\s+usuaria|o\s+usu[aá]rio|a\s+usu[aá]ria"
    r"|l['’]utente"
)
_ASK_VERB = (
    # German (present, past and participle)
    r"gebeten|gefragt|will|wollte|möchte|wünscht|wünschte|gewünscht|sagte|gesagt|verlangt"
    r"|verlangte|bat|bittet|fordert|forderte|gefordert|erlaubt|erlaubte|genehmigt|genehmigte"
    r"|autorisiert|autorisierte|angewiesen|wies|bestätigt|bestätigte|entschied|entschieden"
    r"|bevorzugt|vorgeschlagen|schlug|besteht|bestand"
    # French
    r"|demande|demandé|demandait|veut|voulait|voulu|souhaite|souhaitait|souhaité|dit|disait"
    r"|autorise|autorisé|exige|exigé|approuvé|approuve|précisé|préfère|insisté|décidé"
    r"|choisi|proposé|permis|ordonné"
    # Spanish
    r"|pidió|pide|pedido|quiere|quería|querido|solicitó|solicita|solicitado|dijo|dice|dicho"
    r"|autorizó|autoriza|autorizado|desea|deseaba|exige|exigió|aprobó|aprobado|prefiere"
    r"|insistió|decidió|eligió|propuso|permitió|ordenó"
    # Portuguese and Italian
    r"|pediu|quer|queria|disse|autorizou|solicitou|aprovou|preferiu|chiesto|chiede|vuole"
    r"|voleva|detto|autorizzato|richiesto|approvato"
)
# The subject, then (a few words later, for the German participle) the verb.
_USER_CLAIM = re.compile(
    rf"\b(?:{_USER_NOUN})\s+(?P<mid>(?:[^\s;:,]+\s+){{0,8}}?)(?:{_ASK_VERB})\b"
    r"|\b(?:auf|nach)\s+(?:wunsch|bitte|anweisung)\s+(?:des|der)\s+(?:nutzer|benutzer|anwender)"
    r"|\b(?:à|a)\s+la\s+demande\s+de\s+l['’]utilisat|\bcomme\s+(?:l['’]a\s+)?demandé"
    r"|\b(?:a|por)\s+(?:petición|pedido|solicitud)\s+del\s+usuario|\bcomo\s+pidió\s+el\s+usuario"
    r"|\bsu\s+richiesta\s+dell['’]utente"
)
_YOU = re.compile(
    # German: du / ihr (Sie is "they" too once lower-cased: only with the agent's words)
    r"\b(?:du|ihr)\s+(?:darfst|kannst|sollst|musst|solltest|dürft|könnt|sollt|müsst|bist\s+"
    r"(?:berechtigt|autorisiert|befugt))\b|\b(?:darfst|kannst|sollst|musst)\s+du\b"
    r"|\bdein(?:e|en)?\s+(?:aufgabe|nächster|auftrag|rolle)\b"
    r"|\b(?:erlaubt|autorisiert|gestattet|berechtigt|bittet|weist)\s+(?:dir|dich)\b"
    r"|\b(?:dich|dir|euch|den\s+agenten|dem\s+agenten)\s+(?:\S+\s+){0,3}?(?:autorisiert|erlaubt"
    r"|gestattet|berechtigt|ermächtigt)\b"
    # French
    r"|\b(?:vous|tu)\s+(?:pouvez|devez|devriez|pourrez|êtes\s+(?:autorisée?s?|libres?)"
    r"|avez\s+(?:le\s+droit|l['’]autorisation)|peux|dois|devrais|es\s+autorisée?)\b"
    r"|\b(?:vous|t['’])\s*(?:autorise|permet)\b|\bvotre\s+(?:tâche|prochaine)\b"
    r"|\b(?:vous|t['’])\s*a(?:vez)?\s+(?:autorisée?|permis)\b"
    r"|\bdu\s+hast\s+(?:die\s+|jetzt\s+)?(?:erlaubnis|freigabe|befugnis)\b"
    r"|\btienes?\s+(?:permiso|autorización)\b"
    # Spanish, Portuguese, Italian
    r"|\b(?:usted|tú|você)\s+(?:puede|puedes|debe|debes|tiene\s+que|tienes\s+que|pode|deve)\b"
    r"|\b(?:puedes|debes|tienes\s+que|estás\s+autorizad[oa]|está\s+autorizado\s+a)\b"
    r"|\bte\s+(?:autoriza|autorizó|permite|ha\s+autorizado)\b|\btu\s+tarea\b"
    r"|\b(?:puoi|devi|sei\s+autorizzat[oa])\b"
)
_TO_AGENT = re.compile(
    r"\b(?:der|dem|den)\s+(?:agent|agenten|assistent|assistenten|ki)\s+(?:darf|soll|muss"
    r"|ist\s+(?:berechtigt|autorisiert|befugt))\b"
    r"|\b(?:l['’]agent|l['’]assistant|le\s+modèle)\s+(?:doit|devra|est\s+autorisé)\b"
    r"|\b(?:el\s+agente|el\s+asistente|el\s+modelo|o\s+agente|l['’]agente)\s+(?:debe"
    r"|deberá|tiene\s+que|está\s+autorizado|deve)\b"
    r"|\b(?:ab\s+jetzt|von\s+nun\s+an|ab\s+sofort|künftig|désormais|dorénavant"
    r"|à\s+partir\s+de\s+maintenant|a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante"
    r"|d['’]ora\s+in\s+poi|a\s+partir\s+de\s+agora)\b"
)
_SECRECY = re.compile(
    r"\b(?:sag|erzähl|verrat)\s+(?:\w+\s+){0,2}?nichts\b|\bsagen\s+sie\s+(?:\w+\s+){0,2}?nichts\b"
    r"|\bnicht\s+(?:erwähnen|verraten|mitteilen|erzählen)\b"
    r"|\b(?:geheim\s+halten|verschweig\w*|heimlich)\b|\bhalte\w*\s+(?:\w+\s+){0,4}?geheim\b"
    r"|\bne\s+(?:le\s+|lui\s+|leur\s+)?(?:dites|dis|mentionnez|signalez|prévenez"
    r"|informez|racontez)\s+(?:rien|pas)\b|\bgarde[rz]?\s+(?:\w+\s+){0,2}secret|\bsecrètement\b"
    r"|\bno\s+(?:se\s+lo\s+|le\s+|les\s+|lo\s+)?(?:digas|diga|menciones|mencione|cuentes"
    r"|cuente|avises|avise)\b|\ben\s+secreto\b|\bsecretamente\b"
    r"|\bnão\s+(?:conte|diga|mencione)\b|\bnon\s+(?:dire|dirlo|menzionare)\b"
)
_PERMISSION = re.compile(
    r"\bohne\s+(?:zu\s+fragen|nachzufragen|nachfrage|rückfrage|bestätigung|zustimmung|erlaubnis)"
    r"|\b(?:alle\s+|jede\s+)?(?:bestätigungen|bestätigung|freigaben?)\s+(?:\w+\s+)?"
    r"(?:überspringen|auslassen|umgehen)"
    r"|\bsans\s+(?:demander|confirmation|confirmer|l['’]accord|autorisation|validation)"
    r"|\b(?:ignorer|sauter|passer|contourner)\s+(?:toutes\s+)?(?:les\s+)?confirmations"
    r"|\bsin\s+(?:preguntar|pedir|confirmación|confirmar|permiso|aprobación)"
    r"|\b(?:omitir|saltar|saltarse|omite|salta)\s+(?:todas\s+)?(?:las\s+)?confirmaciones"
    r"|\bsem\s+(?:perguntar|confirmação)|\bsenza\s+(?:chiedere|conferma)"
)
_SECRET = re.compile(
    r"\b(?:umgebungsvariablen?|api-?schlüssel\w*|zugangsdaten|passw(?:ö|o)rt(?:er)?|geheimnisse"
    r"|variables?\s+d['’]environnement|clés?\s+(?:d['’])?api|identifiants|mots?\s+de\s+passe"
    r"|variables?\s+de\s+entorno|claves?\s+(?:de\s+)?api|credenciales|contraseñas?"
    r"|variáveis\s+de\s+ambiente|senhas?|variabili\s+d['’]ambiente|chiavi\s+api)\b"
)
_REVEAL = re.compile(
    r"\b(?:ausgeb|ausdruck|druck|schreib|kopier|send|aufliste|liste|speicher|gib|zeig|veröffentlich"
    r"|imprim|affich|écri|copi|envoi|envoy|list|export|enregistr|révél|montr"
    r"|escrib|envi|envía|guard|muestr|revel|mostr|stamp|scriv|invi)\w*"
)
_EVERY = re.compile(
    r"\b(?:alle|allen|jede|jeden|sämtliche|tous|toutes|chaque|todas|todos|cada|tutte|tutti)\b"
)


def user_claim(low: str) -> tuple[re.Match[str], str] | None:
    """The match of a non-English user claim in `low`, and the words it claims the user
    said (those between the subject and a final verb, for German's word order)."""
    match = _USER_CLAIM.search(low)
    if match is None:
        return None
    return match, match.groupdict().get("mid") or ""


def instructs(bare: str) -> bool:
    """Whether `bare` (lower-cased, quotes blanked) is addressed to the agent in one of
    these languages."""
    if _YOU.search(bare) or _TO_AGENT.search(bare) or _SECRECY.search(bare):
        return True
    if _PERMISSION.search(bare):
        return True
    return bool(_SECRET.search(bare) and _REVEAL.search(bare) and _EVERY.search(bare))
