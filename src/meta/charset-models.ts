// What text in each script and language looks like, in Unicode: the letters beyond ASCII each
// language writes, and the ideographs common enough that a right decoding is full of them. The
// detector decodes a page's bytes in every candidate encoding (the runtime's TextDecoder holds the
// tables) and asks which result reads most like one of these; so the models describe text, not bytes,
// and one model serves every encoding of its script.

/** A language: the non-ASCII letters its text uses (lower case; upper case is derived), marks included. */
export interface LetterModel {
  name: string;
  letters: string;
  /** The letters are listed most frequent first: the first third counts more, the last third less. */
  byFrequency?: boolean;
}

/** The languages (BCP 47 primary subtags) a model stands for: its name, split at hyphens. */
export const languagesOf = (name: string): string[] => name.split('-');

// Letters each language writes beyond ASCII. Shared letters (é, ü, …) are listed in each language
// that uses them: a decoding is judged by the one language it fits best.
export const LETTER_MODELS: LetterModel[] = [
  { name: 'fr', letters: 'àâæçéèêëîïôœùûüÿ' },
  { name: 'de', letters: 'äöüßé' },
  { name: 'es', letters: 'áéíñóúü' },
  { name: 'pt', letters: 'áâãàçéêíóôõú' },
  { name: 'it', letters: 'àèéìíîòóùú' },
  { name: 'nl', letters: 'éèëïöüáóç' },
  { name: 'da-no-nb-nn', letters: 'æøåéó' },
  { name: 'sv-fi', letters: 'åäöéü' },
  { name: 'is', letters: 'áéíóúýþæöð' },
  { name: 'cs-sk', letters: 'áčďéěíňóřšťúůýžľĺŕäô' },
  { name: 'pl', letters: 'ąćęłńóśźż' },
  { name: 'hu', letters: 'áéíóöőúüű' },
  { name: 'sl-hr-bs', letters: 'čćđšž' },
  { name: 'ro', letters: 'ăâîșțşţ' },
  { name: 'sq', letters: 'ëç' },
  { name: 'tr', letters: 'çğıöşüâîûİ' },
  { name: 'et', letters: 'äöõüšž' },
  { name: 'lv', letters: 'āčēģīķļņšūž' },
  { name: 'lt', letters: 'ąčęėįšųūž' },
  { name: 'mt', letters: 'ċġħżàèìòù' },
  { name: 'eo', letters: 'ĉĝĥĵŝŭ' },
  { name: 'cy', letters: 'âêîôûŵŷáéíóúẁẃẅỳýäëïöü' },
  // windows-1258 decodes tone marks as combining characters after the letter.
  { name: 'vi', letters: 'àáâãèéêìíòóôõùúýăđĩũơư\u0300\u0301\u0303\u0309\u0323' },
  { name: 'ru', letters: 'оеаинтсрвлкмдпуяызьбгчйхжшюцщэфъё', byFrequency: true },
  { name: 'uk', letters: 'оаніивтерксмдлупяьгзбчйхжшюцщєїфґ', byFrequency: true },
  { name: 'be', letters: 'аояіенрскулвмтдыгзбчпьйўшхжцэюфё', byFrequency: true },
  { name: 'bg', letters: 'оаеинтрсвлкдпмзгяъбчйхжшщцюьф', byFrequency: true },
  { name: 'sr-mk', letters: 'аиоенсртјвдклупмзгбчшцћхжљњђфџѓќѕ', byFrequency: true },
  { name: 'el', letters: 'αοετινσρκπμλυηςδγωάίέόχθήύφβώζξψϊϋΐΰ', byFrequency: true },
  {
    name: 'he',
    byFrequency: true,
    letters:
      'יוהלאמרתבנשעכדקפחסגםןצטזךףץ\u05b0\u05b1\u05b2\u05b3\u05b4\u05b5\u05b6\u05b7\u05b8\u05b9\u05bb\u05bc\u05bf\u05c1\u05c2',
  },
  {
    name: 'ar',
    byFrequency: true,
    letters: 'الينمورتهبعةفكدسقأحجإشطصىخثءذضزآظغئؤ\u064b\u064c\u064d\u064e\u064f\u0650\u0651\u0652پچژگکیےہںھ',
  },
  { name: 'th', letters: 'กขฃคฅฆงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรฤลฦวศษสหฬอฮฯะัาำิีึืฺุู฿เแโใไๅๆ็่้๊๋์ํ๎๏๐๑๒๓๔๕๖๗๘๙๚๛' },
];

// The most used Chinese characters, simplified and traditional, and the kanji of everyday Japanese
// web text. A right CJK decoding is mostly these; a wrong one lands on rare characters.
export const COMMON_IDEOGRAPHS =
  '的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切准热' +
  '购物价格脑器装配送货付款质保障店铺优惠券免费包邮闻页登录注册搜索选择款式号码数码产品牌购买订单客服务热销推荐手表鞋服饰童户旅游汽车房屋贷银行' +
  '這來個國說們為時會著過學對裡後麼發當無開見經頭從動兩長樣現將與實點種聲話兒機給幾業間電門東氣內軍產萬體別處總場師書員華報馬張難數應車路親務邊風戰許覺統請愛讓認論義術結連遠資隊帶條變聯權領傳紅決達辦運強區轉衆輕語滿寫識極黃臉錢黨倒設雙歷網專誰讀飛觀爭組視濟離雖壞興準熱購價腦質費頁錄註冊選擇碼買訂單銷薦錶飾戶遊銀' +
  '送料無買物会員登録新規通販店舗情報価格安全配達発送注文確認案内問合方法利用規約検索詳細最新人気限定特集全国円読売気済駅様込払届';

// The Hangul syllables of everyday Korean web text: a wrong decoding lands on rare ones (뀜, 놔).
export const COMMON_HANGUL =
  '이다는의에가고하지서을기사로도한리를나자시어대수아인일적정니주게해상부전과비스그보위장제구여중성들동면라만조있우국원치소것거무문요마개화미경신내오세회행할생각방연물공저분러학업실결관모당영외합때발야되안말음식재단력명선품용' +
  '쇼핑몰최매새운드립쿠폰홈소입금니까습었했겠던며네처럼께서부터까지에서으로와은를이며고요죠데도만원가격배송무료할인이벤트고객센터로그인회원가입검색상품장바구니주문조회';

/** Where a page's top-level domain says its language, as browsers use it to guess an undeclared encoding. */
export const TLD_LANGUAGES: Record<string, string> = {
  jp: 'ja',
  cn: 'zh',
  tw: 'zh',
  hk: 'zh',
  mo: 'zh',
  kr: 'ko',
  ru: 'ru',
  su: 'ru',
  ua: 'uk',
  by: 'be',
  kz: 'ru',
  bg: 'bg',
  rs: 'sr',
  mk: 'mk',
  ba: 'bs',
  cz: 'cs',
  sk: 'sk',
  pl: 'pl',
  hu: 'hu',
  si: 'sl',
  hr: 'hr',
  ro: 'ro',
  md: 'ro',
  tr: 'tr',
  gr: 'el',
  cy: 'el',
  il: 'he',
  lt: 'lt',
  lv: 'lv',
  ee: 'et',
  vn: 'vi',
  th: 'th',
  is: 'is',
  dk: 'da',
  no: 'no',
  se: 'sv',
  fi: 'fi',
  de: 'de',
  at: 'de',
  ch: 'de',
  fr: 'fr',
  be: 'fr',
  es: 'es',
  mx: 'es',
  ar: 'es',
  pt: 'pt',
  br: 'pt',
  it: 'it',
  nl: 'nl',
  mt: 'mt',
  al: 'sq',
  eg: 'ar',
  sa: 'ar',
  ae: 'ar',
  ir: 'ar',
  wales: 'cy',
  cymru: 'cy',
};

/** Punctuation and symbols that text in any script uses: neutral, neither for nor against a decoding. */
export const COMMON_SYMBOLS =
  '\u00a0–—‘’‚“”„…‹›«»•·°©®™€£¥§±×÷¿¡¢′″№₪€฿、。「」『』・ー（）！？：；，．〜【】《》〈〉￥＆／';
