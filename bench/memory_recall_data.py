"""The generated year of memory for bench/memory_recall.py: facts, questions and filler.

Each fact has two questions: one that shares a content word with it, and a paraphrase that
shares none (checked by the bench: no word stem, no Chinese character pair in common). The
paraphrases are written by hand as a person would ask, not produced by swapping words, so the
answer is not leaked. Filler is generated from templates: diary lines, work notes, chat turns,
some on the same topics as the facts (an honest distractor), a fifth of it in Chinese.
"""

from __future__ import annotations

import random

# (fact, question sharing words, paraphrased question without a shared content word)
FACTS_EN: list[tuple[str, str, str]] = [
    (
        "My dentist is Dr. Okafor at the Riverside clinic.",
        "Who is my dentist?",
        "Who looks after my teeth?",
    ),
    (
        "My sister Lena lives in Porto with her two cats.",
        "Where does my sister Lena live?",
        "In which city is my sibling based?",
    ),
    (
        "I am allergic to penicillin; it gave me hives as a child.",
        "What am I allergic to?",
        "Which medicine must doctors never give me?",
    ),
    (
        "Our wifi password hint: the name of the first boat plus 1987.",
        "What is the hint for the wifi password?",
        "How do I get onto the home internet?",
    ),
    (
        "I park the car on level 4 of the Marlow garage at work.",
        "Where do I park the car?",
        "On which floor do I leave my vehicle at the office?",
    ),
    (
        "My passport expires on 14 March 2029.",
        "When does my passport expire?",
        "Until when is my travel document valid?",
    ),
    (
        "I prefer window seats and never want a middle seat on flights.",
        "Which seats do I prefer on flights?",
        "Where do I like to sit when I fly?",
    ),
    (
        "Our landlord is Mr. Haddad, reachable after 6 pm.",
        "Who is our landlord?",
        "Whom do we pay rent to?",
    ),
    (
        "The kids' school starts at 8:15 and pickup is at 15:30.",
        "When does the kids' school start?",
        "What time must the children be dropped off?",
    ),
    (
        "I run 5 km every Tuesday and Thursday morning.",
        "How often do I run?",
        "Which weekdays do I go jogging?",
    ),
    (
        "My blood type is O negative.",
        "What is my blood type?",
        "Which group would a transfusion need?",
    ),
    (
        "I take my coffee black, no sugar.",
        "How do I take my coffee?",
        "How do I like my morning espresso prepared?",
    ),
    (
        "Grandma's birthday is on 2 August; she loves orchids.",
        "When is grandma's birthday?",
        "What should I bring Nana when she turns another year older?",
    ),
    (
        "The gym membership renews every January for 480 euros.",
        "When does the gym membership renew?",
        "How much is the yearly fitness club fee?",
    ),
    (
        "I am learning Portuguese with a tutor named Inês on Saturdays.",
        "Who is my Portuguese tutor?",
        "Which language lessons do I have at weekends?",
    ),
    (
        "My bike is a green Brompton, frame number BX2291.",
        "What is the frame number of my bike?",
        "Which folding bicycle do I ride?",
    ),
    (
        "I decided to switch the team's CI from Jenkins to GitHub Actions in Q2.",
        "What did I decide about Jenkins?",
        "Which build pipeline tool are we moving to?",
    ),
    (
        "My manager is Priya Raman; one-to-ones are Mondays at 10.",
        "Who is my manager?",
        "When do I meet my boss each week?",
    ),
    (
        "I keep the spare house key with the neighbour at number 12.",
        "Where is the spare house key?",
        "If I'm locked out, who can let me in?",
    ),
    (
        "My favourite restaurant is Sora, a small ramen bar on Wick Lane.",
        "What is my favourite restaurant?",
        "Where should we go for noodles?",
    ),
    ("I am vegetarian but eat fish occasionally.", "Am I vegetarian?", "Do I avoid meat?"),
    (
        "The car insurance is with Allianz, policy 7781-22, renewal in October.",
        "Which company is the car insurance with?",
        "Who covers my vehicle against accidents?",
    ),
    (
        "My daughter Mia is allergic to peanuts.",
        "What is Mia allergic to?",
        "Which food is dangerous for my child?",
    ),
    (
        "I water the balcony tomatoes every evening in summer.",
        "When do I water the tomatoes?",
        "How often do the plants outside need a drink?",
    ),
    (
        "My shoe size is 43 EU.",
        "What is my shoe size?",
        "Which trainers fit me when I order online?",
    ),
    (
        "Our anniversary is 9 June; we married in Lisbon in 2015.",
        "When is our anniversary?",
        "On which date did we tie the knot?",
    ),
    (
        "I have a standing order of 200 euros to savings on the 1st of each month.",
        "How much is the standing order to savings?",
        "How much cash do I put aside every few weeks?",
    ),
    (
        "My doctor is Dr. Brandt; the practice opens at 7:30.",
        "Who is my doctor?",
        "Which physician do I see when I'm ill?",
    ),
    (
        "The heating engineer comes once a year in September to service the boiler.",
        "When is the boiler serviced?",
        "In which month does the furnace get checked?",
    ),
    (
        "I prefer tea in the afternoon, usually Earl Grey.",
        "What tea do I prefer?",
        "What hot drink do I have around four o'clock?",
    ),
    (
        "My laptop is a ThinkPad X1, bought in May 2024, warranty three years.",
        "Which laptop do I have?",
        "What notebook computer do I work on?",
    ),
    (
        "I donate blood every four months at the Red Cross centre.",
        "How often do I donate blood?",
        "How regularly do I give a pint at the clinic?",
    ),
    (
        "Our cleaner Ana comes on Fridays; she has her own key.",
        "When does the cleaner come?",
        "Which day is the flat tidied by our housekeeper?",
    ),
    (
        "My best friend Tom moved to Vancouver last spring.",
        "Where did Tom move?",
        "Which Canadian city is my closest mate in now?",
    ),
    (
        "I hate cilantro; leave it out of every recipe.",
        "Do I like cilantro?",
        "Which herb should never go into my food?",
    ),
    (
        "The dog's vet is Dr. Silva; Bruno needs his rabies shot in April.",
        "Who is the dog's vet?",
        "When is our pet's next vaccination?",
    ),
    (
        "I am saving for a trip to Japan in cherry blossom season next year.",
        "What am I saving for?",
        "Which country do I want to visit in spring?",
    ),
    (
        "My mother's phone number ends in 4471.",
        "What does my mother's phone number end in?",
        "Which digits close mum's mobile?",
    ),
    (
        "The quarterly report is due the second Friday after quarter end.",
        "When is the quarterly report due?",
        "What's the deadline for the three-month summary?",
    ),
    (
        "I wear glasses for reading only, strength +1.5.",
        "What strength are my reading glasses?",
        "Do I need spectacles to see a book?",
    ),
]

FACTS_ZH: list[tuple[str, str, str]] = [
    ("我的牙医是王医生，在人民路诊所。", "我的牙医是谁？", "谁帮我看牙齿？"),
    ("我对青霉素过敏。", "我对什么过敏？", "哪种药千万不能给我用？"),
    ("妹妹住在成都，养了一只猫。", "我妹妹住在哪里？", "我的小妹定居哪座城市？"),
    ("每周二和周四早上我跑五公里。", "我每周跑几次？", "我哪几天晨练慢跑？"),
    ("我喝咖啡不加糖。", "我的咖啡要加糖吗？", "早上那杯拿铁怎么冲？"),
    ("奶奶的生日是八月二号，她喜欢兰花。", "奶奶的生日是哪天？", "外婆过寿应该送什么花？"),
    ("我的护照二零二九年三月到期。", "我的护照什么时候到期？", "出国证件还能用多久？"),
    ("我们的房东姓李，晚上六点后可以联系。", "我们的房东是谁？", "租金交给哪位？"),
    ("孩子们的学校八点十五分上课。", "学校几点上课？", "早上要几点把小孩送到？"),
    ("我的血型是O型阴性。", "我的血型是什么？", "需要输液时该准备哪一种？"),
    ("我是素食者，但偶尔吃鱼。", "我是素食者吗？", "我平时碰肉吗？"),
    ("车停在公司车库四楼。", "车停在哪里？", "上班时我把汽车放在几层？"),
    ("我的经理是陈静，每周一上午十点一对一面谈。", "我的经理是谁？", "每星期什么时候和老板开会？"),
    ("备用钥匙放在十二号邻居家。", "备用钥匙在哪里？", "如果进不了门，找谁帮忙？"),
    ("我最喜欢的餐厅是巷口那家兰州拉面馆。", "我最喜欢的餐厅是哪家？", "想吃面条去哪儿？"),
    ("女儿对花生过敏。", "女儿对什么过敏？", "哪种食物对孩子有危险？"),
    ("我的鞋码是四十三码。", "我的鞋码是多少？", "买运动鞋该选多大？"),
    ("结婚纪念日是六月九日。", "结婚纪念日是哪天？", "我们哪天办的婚礼？"),
    ("我讨厌香菜，做菜别放。", "我喜欢香菜吗？", "哪种调料千万别加到饭里？"),
    ("狗狗的兽医是刘医生，四月要打狂犬疫苗。", "狗狗的兽医是谁？", "宠物下一次接种在什么时候？"),
]

_TOPICS_EN = [
    "the quarterly budget",
    "a flaky test in the payment service",
    "weekend plans",
    "the new coffee machine",
    "a podcast about history",
    "the train strike",
    "our holiday photos",
    "a bug in the invoice export",
    "the garden fence",
    "a book about habits",
    "the kitchen renovation",
    "the football match",
    "a recipe for lentil soup",
    "the printer jam",
    "the team offsite",
    "tax forms",
    "a documentary on oceans",
    "the broken umbrella",
    "a concert next month",
    "the neighbour's new puppy",
    "a migration to Postgres 16",
    "the electricity bill",
    "the teeth whitening advert",
    "a cousin's wedding",
    "the sourdough starter",
]
_VERBS_EN = [
    "talked about",
    "made a note about",
    "asked for a summary of",
    "complained about",
    "looked up",
    "planned",
    "reviewed",
    "sketched ideas for",
    "read about",
    "fixed",
]
_TAILS_EN = [
    "and decided to revisit it later.",
    "which took longer than expected.",
    "with no clear outcome.",
    "and it went fine.",
    "before lunch.",
    "late in the evening.",
    "while waiting for the bus.",
    "and shared it with the team.",
    "again, for the third time.",
    "and wrote down two follow-ups.",
]
_TOPICS_ZH = [
    "季度预算",
    "支付服务里的测试",
    "周末安排",
    "新咖啡机",
    "历史播客",
    "火车罢工",
    "假期照片",
    "发票导出的问题",
    "花园围栏",
    "习惯养成的书",
    "厨房装修",
    "足球比赛",
    "扁豆汤的做法",
    "打印机卡纸",
    "团队团建",
    "报税表格",
    "海洋纪录片",
    "电费账单",
]
_VERBS_ZH = ["聊了聊", "记录了", "查了一下", "抱怨了", "计划了", "复盘了", "读了关于", "修好了"]
_TAILS_ZH = [
    "，打算以后再看。",
    "，比预想的久。",
    "，没有结论。",
    "，一切顺利。",
    "，在午饭前。",
    "，晚上很晚。",
]


def filler(rng: random.Random, chinese: bool) -> str:
    """One generated line of everyday memory (a note or a chat message)."""
    if chinese:
        return f"今天{rng.choice(_VERBS_ZH)}{rng.choice(_TOPICS_ZH)}{rng.choice(_TAILS_ZH)}"
    return (
        f"{rng.choice(['Today I', 'We', 'I', 'Earlier I'])} {rng.choice(_VERBS_EN)} "
        f"{rng.choice(_TOPICS_EN)} {rng.choice(_TAILS_EN)} (#{rng.randrange(10_000)})"
    )


# Conversations of the year that share one common word with messages about something else: a
# job's own runs ("cron") and greetings. Auto-recall must not bring them back for that word.
COMMON_WORD_SESSIONS: list[tuple[str, str, list[str]]] = [
    (
        "cron:backup",
        "cron",
        [
            "Run the nightly cron job that backs up the photos folder.",
            "The cron backup finished: 212 files copied to the NAS.",
        ],
    ),
    (
        "cron:news",
        "cron",
        [
            "Cron run: collect this morning's headlines about the harbour.",
            "Three headlines today: the harbour dredging, a ferry delay, a new mayor.",
        ],
    ),
    (
        "greet-1",
        "web",
        ["Hello!", "Hello! How can I help you today?"],
    ),
    (
        "greet-2",
        "telegram",
        ["hello again, thanks for yesterday", "You're welcome, happy to help again."],
    ),
    (
        "greet-3",
        "web",
        ["你好，今天天气怎么样？", "你好！我查不到实时天气，可以告诉我你在哪个城市吗？"],
    ),
    (
        "test-1",
        "web",
        ["Can you help me test the new router settings?", "Sure: open 192.168.1.1 first."],
    ),
]

# Messages with nothing relevant stored in the year (written by hand): greetings, arithmetic, new
# topics, and messages that share one common word with a stored conversation (above or the
# filler) while being about something else. (kind, message)
UNRELATED: list[tuple[str, str]] = [
    ("greeting", "hello"),
    ("greeting", "Hello there!"),
    ("greeting", "hi, how are you?"),
    ("greeting", "Good morning!"),
    ("greeting", "thanks, that's all for now"),
    ("greeting", "你好"),
    ("greeting", "早上好！"),
    ("greeting", "谢谢你"),
    ("greeting", "晚安"),
    ("greeting", "hey, you there?"),
    ("arithmetic", "What is 17 times 23?"),
    ("arithmetic", "2+2?"),
    ("arithmetic", "Divide 1440 by 12 please."),
    ("arithmetic", "What's 15% of 80?"),
    ("arithmetic", "square root of 169"),
    ("arithmetic", "计算一下 45 乘以 12"),
    ("arithmetic", "一百减去三十七等于多少？"),
    ("arithmetic", "Convert 30 degrees Celsius to Fahrenheit."),
    ("arithmetic", "How many seconds are in a day?"),
    ("arithmetic", "Is 221 a prime number?"),
    ("new topic", "How do black holes form?"),
    ("new topic", "Write a haiku about autumn leaves."),
    ("new topic", "Explain Python decorators with a short example."),
    ("new topic", "What is the capital of Australia?"),
    ("new topic", "Translate 'good luck' into Spanish."),
    ("new topic", "Recommend a board game for four players."),
    ("new topic", "How does a heat pump work?"),
    ("new topic", "Summarize the plot of Hamlet in two sentences."),
    ("new topic", "What causes the northern lights?"),
    ("new topic", "Give me three tips for a job interview."),
    ("new topic", "为什么天空是蓝色的？"),
    ("new topic", "推荐几本科幻小说。"),
    ("new topic", "怎么煮一锅好吃的米饭？"),
    ("new topic", "解释一下什么是区块链。"),
    ("new topic", "帮我写一首关于月亮的短诗。"),
    ("one common word", "How do I write a cron expression for every five minutes?"),
    ("one common word", "Is cron or systemd timers better on a laptop?"),
    ("one common word", "Hello, can you explain what a mortgage is?"),
    ("one common word", "Say hello in Japanese."),
    ("one common word", "Write a unit test for a function that reverses a string."),
    ("one common word", "Which new phones have the best camera this year?"),
    ("one common word", "What time is it in Tokyo right now?"),
    ("one common word", "Tell me a joke about the weekend."),
    ("one common word", "How do I delete a branch in git?"),
    ("one common word", "你好，帮我解释一下量子计算。"),
    ("one common word", "今天是星期几？"),
    ("one common word", "Thanks! Now list the planets in order."),
    ("one common word", "What should I read about the history of Rome?"),
    ("one common word", "Help me plan a birthday party for a six year old."),
    ("one common word", "Can you check my grammar in this sentence: 'he go to school'?"),
]

# Held out: a second paraphrase of every fact, written by hand after the bench's first set (in
# the order of FACTS_EN and FACTS_ZH), sharing no content stem or character pair with its fact
# either. Nothing was tuned on these: the ranking and the recall rule were chosen on the first
# paraphrases and on UNRELATED, and these were run once the choice was made.
HELD_OUT_EN: list[str] = [
    "Which practitioner should I book for a tooth check-up?",
    "If I wanted to visit my little sis abroad, where would I fly?",
    "Is there an antibiotic I react badly to?",
    "What's the clue for logging on to our wireless network?",
    "Which deck of the multi-storey do I use near my job?",
    "When will I need to renew my ID for travelling abroad?",
    "Which spot on an airplane makes me happiest?",
    "Who owns the flat we live in, and when can I call him?",
    "When does class begin for the little ones?",
    "On what days do I do my cardio?",
    "Which donor group is compatible with me in an emergency?",
    "How should you make my cup of joe?",
    "What flowers does my granny adore?",
    "How much do I pay annually to work out at the sports centre?",
    "What am I studying with a private teacher?",
    "What's the serial on my two-wheeler?",
    "What did I choose to replace our old build server with?",
    "Who do I report to at the office?",
    "Who has a backup for getting into our place?",
    "Which eatery do I love most?",
    "Is a beef burger okay for me at dinner?",
    "Which company protects our automobile, and when does that cover lapse?",
    "What nut must my little girl stay away from?",
    "When do I irrigate the veg on the terrace?",
    "What's my foot measurement for buying boots?",
    "Where was our wedding held?",
    "How much gets moved automatically into my reserve account?",
    "Who is my GP?",
    "When does the technician look at our hot water system?",
    "What do I like to sip after lunch?",
    "Until when is my computer's guarantee good?",
    "How often do I go to give plasma?",
    "When does our help come to do the flat?",
    "Where does my buddy live these days?",
    "Is there a green garnish I can't stand?",
    "Which animal doctor looks after our puppy?",
    "Where am I hoping to go on holiday?",
    "What are the final digits to reach my mom?",
    "When do I have to submit the three-monthly write-up?",
    "What prescription are my specs?",
]
HELD_OUT_ZH: list[str] = [
    "牙疼了应该去找哪位大夫？",
    "哪种抗生素我不能打？",
    "去看望妹子得坐车去哪儿？",
    "我一般星期几锻炼身体？",
    "给我冲美式要放甜的吗？",
    "祖母最爱什么植物？",
    "我出境用的本子哪年失效？",
    "这间公寓的主人是谁？",
    "小朋友每天早上几点开课？",
    "我属于哪一类献血者？",
    "我的饮食有什么忌口？",
    "去单位开车的话，我一般泊在几层？",
    "谁是我直属的上级？",
    "被锁在门外时能去谁那里拿门匙？",
    "下馆子首选哪家店？",
    "小姑娘吃哪种坚果会出问题？",
    "网上买靴子该挑多大的尺寸？",
    "我和爱人是哪天成的亲？",
    "有哪种叶子调味我受不了？",
    "谁给我们家小狗看病？",
]

# Held out again (issue 36, lane recall): a third paraphrase of every fact, written by hand
# after the ranking change of that lane was chosen on the first paraphrases, and run once
# afterwards; the same rule (no shared content stem, no shared Chinese character pair).
HELD_OUT_2_EN: list[str] = [
    "Whose surgery do I go to when a molar aches?",
    "Where has my sis made her home?",
    "Which drug brings me out in a rash?",
    "What reminder helps me recall the router login?",
    "Which storey do I leave the motor on near my job?",
    "When does my travel ID run out?",
    "On a plane, which place do I always book?",
    "Who owns the flat we rent?",
    "When do lessons begin for my children each morning?",
    "How many times a week do I go for a jog?",
    "What's my transfusion group?",
    "How do I want my brew served when I wake up?",
    "Which blooms would make my nan happy?",
    "How much is my annual workout club fee?",
    "Who gives me language classes at the weekend?",
    "What model of cycle do I own?",
    "Which automation service will our builds run on?",
    "Who is my line supervisor?",
    "Who holds an extra copy to get into our home?",
    "Where do I most like to eat out?",
    "Can I have chicken for supper?",
    "Which firm do I pay to cover my vehicle?",
    "What snack must my girl never eat?",
    "When do the veggies on the terrace get a drink?",
    "Which number of sneakers fits my feet?",
    "When is our wedding day celebrated?",
    "How much money goes into my nest egg automatically?",
    "Who is my family physician?",
    "When does the gas man inspect our furnace?",
    "What brew do I enjoy after lunch?",
    "Which portable computer do I use?",
    "How frequently do I give plasma?",
    "On what day does our housekeeper visit?",
    "Where did my closest pal relocate?",
    "Which leafy seasoning do I detest?",
    "Who treats our pup when he is sick?",
    "What holiday am I putting money aside for?",
    "What are the last digits of mum's mobile?",
    "When must the three-month summary be handed in?",
    "What power are my specs?",
]
HELD_OUT_2_ZH: list[str] = [
    "我牙痛时找哪位大夫？",
    "哪种抗生素会让我出疹子？",
    "我小妹现在定居哪里？",
    "我一周慢跑几回？",
    "我的美式要放甜味吗？",
    "给祖母过寿该送什么？",
    "出境证件哪天失效？",
    "租公寓时要联络哪位业主？",
    "小朋友早晨几时开课？",
    "输血时我属于哪一类？",
    "我能吃牛排吗？",
    "上班时我的汽车泊在第几层？",
    "直属领导叫什么名字？",
    "门被锁住了，谁能帮我开？",
    "外出吃饭首选哪里？",
    "孩子不能碰哪种坚果？",
    "买运动靴选多大尺寸？",
    "婚礼在什么日子办的？",
    "哪种绿叶调料我不吃？",
    "宠物生病了该带去找谁？",
]
